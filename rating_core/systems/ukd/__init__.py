"""rating_core.systems.ukd."""
