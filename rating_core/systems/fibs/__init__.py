"""FIBS backgammon ratings (RULES §5) by role: `replay` (rules, classification, the replay kernel,
the list) and `periods` (a range of periods in one pass)."""
