"""Site ratings (RULES §2) by role: `replay` (rules, classification, the replay kernel, lists),
`periods` (a range of periods in one pass), `moderation` (annulments and their causes) and `elo`
(the plain Elo formula and calculator)."""
