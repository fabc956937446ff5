"""Text built from columns: `format_text`, `pl.format`'s meaning without its crash.

Polars 2.1's `pl.format` panics ("assertion failed: i < self.len()") on a string column whose
first chunk is empty, which an eager filter of a frame built from several pieces leaves (the
PGN scanner's chunks: duplicate game ids only in a later chunk crashed the ingest instead of
being quarantined). `pl.concat_str` has no such bug and the same meaning, so every reason,
label and id the pipeline builds goes through `format_text` (ruff bans `pl.format`).
"""

from __future__ import annotations

import re

import polars as pl

PLACEHOLDER = "{}"

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def is_safe_name(value: str) -> bool:
    """Whether `value` can be one path component of the lake (letters, digits, `.`, `_`, `-`):
    here, below every layer, because club folder names are checked by it before any lake exists."""
    return isinstance(value, str) and bool(_SAFE_NAME.match(value)) and value not in {".", ".."}


def format_text(template: str, *args: pl.Expr | str) -> pl.Expr:
    """`template` with each `{}` replaced by the next argument (a column name or an
    expression) as text; null when any argument is null, and named after the first argument,
    as `pl.format`."""
    pieces = template.split(PLACEHOLDER)
    if len(pieces) != len(args) + 1:
        raise ValueError(
            f"format_text: {len(pieces) - 1} placeholders in {template!r}, {len(args)} arguments"
        )
    exprs = [pl.col(arg) if isinstance(arg, str) else arg for arg in args]
    items: list[pl.Expr] = []
    for text, expr in zip(pieces, [*exprs, None], strict=True):
        if text:
            items.append(pl.lit(text))
        if expr is not None:
            items.append(expr)
    if not exprs:
        return pl.lit(template)
    return pl.concat_str(items).alias(
        exprs[0].meta.output_name(raise_if_undetermined=False) or "literal"
    )
