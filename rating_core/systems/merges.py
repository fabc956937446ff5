"""Duplicate players (`federation/merges.csv`): the federation and club lists rate a merged id's
games and starting-list entries as the kept id's, and name the merge as the diff cause.

A merge takes effect from its `effective_period`, the first period holding a game of the merged
id (or computed from a starting list holding it): before it the merged id appears nowhere, so
renaming every game and entry gives the lists of a federation that never had the duplicate.
A version names only the merges new since the last publication of its period (`APPLIED_SCHEMA`,
kept per period in the lake), never the old ones again.
"""

from __future__ import annotations

import polars as pl

from rating_core.schemas import MERGES_SCHEMA, TableSchema
from rating_core.text import format_text

NON_PLATFORM = pl.col("source") != "platform"
"""Merges are federation decisions: they apply to federation and club games, not to platform
accounts (the site lists have moderation for that)."""

APPLIED_SCHEMA: TableSchema = {"keep_id": pl.String, "merge_id": pl.String}
"""The merges a publication of a period applied."""

CAUSES_SCHEMA: TableSchema = {"player_id": pl.String, "cause": pl.String}


def _mapping(merges: pl.DataFrame | None) -> dict[str, str]:
    if merges is None or not merges.height:
        return {}
    return dict(zip(merges["merge_id"], merges["keep_id"], strict=True))


def apply_merges(
    games: pl.DataFrame, starting_lists: pl.DataFrame | None, merges: pl.DataFrame | None
) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """Games and starting lists with every merged id replaced by its kept id.

    Games between the two ids of a merge (quarantined by `resolve_merges`) are dropped. Decision:
    when both ids have an entry on the same starting list, the kept id's entry stands and the
    merged id's is dropped; platform games are left alone.
    """
    mapping = _mapping(merges)
    if not mapping:
        return games, starting_lists
    ids = list(mapping)
    merged = NON_PLATFORM & (pl.col("white_id").is_in(ids) | pl.col("black_id").is_in(ids))
    renamed = games.with_columns(
        merged.alias("_merged"),
        *(
            pl.when(NON_PLATFORM).then(pl.col(side).replace(mapping)).otherwise(pl.col(side))
            for side in ("white_id", "black_id")
        ),
    )
    self_game = (pl.col("white_id") == pl.col("black_id")).fill_null(False)
    renamed = renamed.filter(~(pl.col("_merged") & self_game)).drop("_merged")
    if starting_lists is None or not starting_lists.height:
        return renamed, starting_lists
    was_merged = pl.col("player_id").is_in(list(mapping))
    lists = starting_lists.with_columns(
        was_merged.alias("_merged"), pl.col("player_id").replace(mapping)
    )
    taken = pl.len().over("list", "period", "player_id") > 1  # the kept id has its own entry
    lists = lists.filter(~(pl.col("_merged") & taken)).drop("_merged")
    return renamed, lists


def merges_in_force(merges: pl.DataFrame | None, period: str) -> pl.DataFrame:
    """The merges that change the lists of `period` (effective in or before it)."""
    if merges is None or not merges.height:
        return pl.DataFrame(schema=MERGES_SCHEMA)
    return merges.filter(pl.col("effective_period") <= period).sort("merge_id")


def _label() -> pl.Expr:
    return format_text(
        "merged {} into {}: {} (decided {})",
        "merge_id",
        "keep_id",
        pl.col("reason").fill_null("no reason given"),
        pl.col("decided_at").dt.strftime("%Y-%m-%d"),
    )


def new_merges(
    merges: pl.DataFrame | None, period: str, applied: pl.DataFrame | None
) -> pl.DataFrame:
    """The merges in force for `period` that its last publication had not applied."""
    current = merges_in_force(merges, period)
    if applied is None or not applied.height or not current.height:
        return current
    applied = applied.select(pl.col(c).cast(t) for c, t in APPLIED_SCHEMA.items())
    return current.join(applied, on=["keep_id", "merge_id"], how="anti")


def withdrawn_merges(
    merges: pl.DataFrame | None, period: str, applied: pl.DataFrame | None
) -> pl.DataFrame:
    """The merges the last publication of `period` applied that are no longer in force (a line
    taken out of merges.csv): the merged id is rated as itself again."""
    if applied is None or not applied.height:
        return pl.DataFrame(schema=APPLIED_SCHEMA)
    applied = applied.select(pl.col(c).cast(t) for c, t in APPLIED_SCHEMA.items())
    current = merges_in_force(merges, period).select(list(APPLIED_SCHEMA))
    return applied.join(current, on=["keep_id", "merge_id"], how="anti").sort("merge_id")


def merge_causes(
    merges: pl.DataFrame | None, period: str, applied: pl.DataFrame | None
) -> pl.DataFrame:
    """Per player (both ids of each merge new or withdrawn since the last publication), the
    diff's cause: "merged b-17 into a-3: same person (decided 2026-03-02)", or "merge of b-17
    into a-3 withdrawn"."""
    new = new_merges(merges, period, applied).with_columns(_label().alias("cause"))
    withdrawn = withdrawn_merges(merges, period, applied).with_columns(
        format_text("merge of {} into {} withdrawn", "merge_id", "keep_id").alias("cause")
    )
    labelled = pl.concat(
        [f.select("keep_id", "merge_id", "cause") for f in (new, withdrawn) if f.height]
        or [pl.DataFrame(schema={**APPLIED_SCHEMA, "cause": pl.String})]
    )
    return pl.concat(
        [
            labelled.select(pl.col("keep_id").alias("player_id"), "cause"),
            labelled.select(pl.col("merge_id").alias("player_id"), "cause"),
        ]
    )


def merge_reason(
    base: str, merges: pl.DataFrame | None, period: str, applied: pl.DataFrame | None
) -> str:
    """The manifest reason: `base`, plus the merges new or withdrawn since the last publication."""
    reason = base
    new = new_merges(merges, period, applied)
    if new.height:
        named = ", ".join(f"{m} into {k}" for k, m in new.select("keep_id", "merge_id").iter_rows())
        reason += f"; merged {named} (federation/merges.csv)"
    withdrawn = withdrawn_merges(merges, period, applied)
    if withdrawn.height:
        named = ", ".join(f"{m} into {k}" for k, m in withdrawn.iter_rows())
        reason += f"; merge of {named} withdrawn"
    return reason
