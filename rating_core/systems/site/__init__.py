"""Site ratings (RULES §2) by role: `rules` (constants, reasons, schemas), `classification`
(rated, excluded or rejected, in one numba pass), `kernel` (the numba replay over player
records), `replay` (one period or a range through the kernel to history and state frames),
`periods` (a range of periods in one pass), `lists` (the period's lists), `calculator` (§7),
`elo` (the Elo formula both share) and `moderation` (annulments and their causes)."""
