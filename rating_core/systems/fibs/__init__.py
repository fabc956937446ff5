"""FIBS backgammon ratings (RULES §5) by role: `rules` (constants, reasons, schemas),
`classification` (ranked, excluded or rejected, in one numba pass), `formula` (P, V and m, shared
by kernel and calculator), `pairs` (the fair-play window's pair table), `kernel` (the numba
replay over player records), `replay` (one period or a range through the kernel to history and
state frames), `periods` (a range of periods in one pass), `lists` (the `fibs` list) and
`calculator` (§7)."""
