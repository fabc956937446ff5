"""rating_core.systems.site."""
