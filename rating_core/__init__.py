"""Pure rating logic, no Dagster: the bases (`schemas`, `periods`, `rounding`, `names`,
`timecontrol`, `text`), `ingest` (readers), `kernels` (numba plumbing), `systems` (the
engines) and `lake` (tables, storage, publishing)."""
