"""rating_core.kernels."""
