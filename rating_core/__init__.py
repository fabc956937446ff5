"""rating_core package."""
