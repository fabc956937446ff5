"""numba plumbing shared by the engines: `intrinsics` (prefetch, 8-byte loads, aligned arrays)
and `codes` (the id coder, positions among keys, the replay order)."""
