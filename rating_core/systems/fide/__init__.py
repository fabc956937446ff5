"""FIDE lists (RULES §3) by role: `rules` (constants, schemas), `tables` (PD and dp), `steps`
(steps 1-4; the Polars, numpy and numba versions of steps 1-3 side by side), `newcomers` (the
pool and first ratings), `period` (one period's lists and explanations), `calculator` (§7)."""
