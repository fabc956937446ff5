"""numba plumbing shared by the engines: `intrinsics` (prefetch, 8-byte loads, aligned arrays),
`codes` (the id coder, positions among keys, the replay order), `arrays` (read-only inputs: one
compiled type each) and `memory` (a kernel's fresh output pages mapped in on another thread)."""
