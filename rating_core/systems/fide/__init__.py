"""rating_core.systems.fide."""
