"""UKD lists (RULES §4) by role: `rules` (constants, schemas), `steps` (k bands, the change of
one tournament), `newcomers` (the pool and first UKDs), `period` (one period's lists and
explanations), `calculator` (§7)."""
