"""rating_core.lake.storage."""
