"""rating_core.systems.fibs."""
