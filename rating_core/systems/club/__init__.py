"""Club lists (RULES §6) by role: `rules` (constants, schemas), `folders` (club folder slugs and
list names), `period` (each tournament in order, and the period's list)."""
