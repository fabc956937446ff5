"""The lake: `tables` (the catalogue of every table), `storage` (atomic Hive-partitioned Parquet),
`publishing` (versioned, immutable lists), `digests` (SHA-256 of files, frames and period inputs)
and `lock` (one run at a time); for readers, `versions` (every published version, from its
manifest), `as_of` (the version in force on a date) and `query` (read-only DuckDB views)."""
