"""FIBS backgammon ratings (RULES §5) by role: `rules` (constants, reasons, schemas),
`classification` (ranked, excluded or rejected, in one numba pass), `formula` (P, V and m, shared
by kernel and calculator), `pairs` (the fair-play window's pair table), `kernel` (the numba
replay over player records), `replay` (`FibsReplay`, fed batches of matches in replay order,
through the kernel to history and, at each period's end, state frames), `periods` (a range of
periods in one replay), `lists` (the `fibs` list) and `calculator` (§7)."""
