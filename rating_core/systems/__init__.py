"""rating_core.systems."""
