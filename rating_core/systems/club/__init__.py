"""rating_core.systems.club."""
