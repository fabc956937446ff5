"""`federation/merges.csv`: a rating officer's decisions that two player ids are one person.

Each row (`keep_id, merge_id, decided_at, reason`) says that every game and starting-list entry
of `merge_id` counts as `keep_id`'s. A bad row (an empty id, a bad date, an id merged twice) is
quarantined and the other rows still apply; a chain or a cycle of merges (a into b and b into c,
or a into b and b into a) has no single id to keep, so the whole file is refused in one sentence
(`MergeChainError`). Once the games and starting lists are ingested, `resolve_merges` quarantines
the merges naming an id found nowhere and dates each merge: the first period it changes.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from rating_core.ingest.common import IngestResult, UnreadableFileError
from rating_core.ingest.csv_games import (
    LINE,
    Check,
    apply_checks,
    base_checks,
    duplicate_check,
    empty_check,
    null_if_empty,
    parse_utc,
    read_csv_strings,
    require_columns,
)
from rating_core.schemas import MERGES_SCHEMA, QUARANTINE_SCHEMA, conform, empty
from rating_core.systems.merges import NON_PLATFORM
from rating_core.text import format_text

MERGES_FILE = "merges.csv"
"""The file's name in the inbox's `federation/` folder."""

MERGES_REQUIRED = ("keep_id", "merge_id", "decided_at", "reason")


class MergeChainError(UnreadableFileError):
    """A merges file whose merges chain or cycle: refused as a whole, in one sentence."""


def read_merges(path: Path, source_file: str | None = None) -> IngestResult:
    """Read a merges CSV into MERGES_SCHEMA rows (no `effective_period` yet).

    Raises `MergeChainError` when the good rows chain or cycle, `UnreadableFileError` for a file
    that is not a CSV or lacks a required column.
    """
    src = str(path) if source_file is None else source_file
    table = read_csv_strings(path, src)
    require_columns(table, MERGES_REQUIRED)
    checks = [
        *base_checks(table),
        empty_check("keep_id"),
        empty_check("merge_id"),
        Check(
            pl.col("keep_id") == pl.col("merge_id"),
            pl.col("merge_id"),
            format_text("keep_id and merge_id are the same id '{}'", pl.col("merge_id")),
        ),
        Check(
            parse_utc("decided_at").is_null(),
            pl.col("decided_at"),
            format_text("decided_at '{}' is not a valid ISO 8601 date", pl.col("decided_at")),
        ),
        duplicate_check("merge_id", "merge_id"),
    ]
    good, quarantine = apply_checks(table.frame, checks, "merge_id", src)
    rows = good.select(
        "keep_id",
        "merge_id",
        parse_utc("decided_at").dt.date().alias("decided_at"),
        null_if_empty("reason").alias("reason"),
        pl.lit(src).alias("source_file"),
        pl.col(LINE).alias("source_line"),
    )
    refuse_chains(rows)
    return IngestResult(rows=conform(rows, MERGES_SCHEMA), quarantine=quarantine)


def refuse_chains(merges: pl.DataFrame) -> None:
    """Raise `MergeChainError` for the first row (by line) whose kept id another row merges away
    or whose merged id another row keeps: a cycle (a into b, b into a) or a chain (a into b, b into
    c), where no single id would stay."""
    if not merges.height:
        return
    pairs = merges.select("keep_id", "merge_id", "source_file", "source_line")
    linked = (
        pairs.join(pairs, left_on="keep_id", right_on="merge_id", suffix="_other")
        .with_columns(
            pl.max_horizontal("source_line", "source_line_other").alias("later"),
            pl.min_horizontal("source_line", "source_line_other").alias("earlier"),
        )
        .sort("later", "earlier")
    )
    if not linked.height:
        return
    row = linked.row(0, named=True)
    file, later, earlier = row["source_file"], row["later"], row["earlier"]
    keep, merge, keep_other = row["keep_id"], row["merge_id"], row["keep_id_other"]
    if keep_other == merge:
        # the later line's merge and the earlier line's, which undoes it
        kept, gone = (keep, merge) if row["source_line"] == later else (merge, keep)
        raise MergeChainError(
            f"{file} line {later}: merging '{gone}' into '{kept}' undoes line {earlier}, which "
            f"merges '{kept}' into '{gone}' (a cycle); keep only the line whose kept id is right"
        )
    raise MergeChainError(
        f"{file} line {later}: '{keep}' keeps '{merge}' but is itself merged into "
        f"'{keep_other}' (lines {earlier} and {later} chain); merge every duplicate straight into "
        f"'{keep_other}'"
    )


def merge_player_games(games: pl.LazyFrame | pl.DataFrame, merges: pl.DataFrame) -> pl.DataFrame:
    """The games of `games` with a kept or a merged id of `merges` on either side: all that
    `resolve_merges` reads of the games (whether an id is known, platform-only or a
    federation's, its first period, the games between the two ids), filtered in the scan so
    that a platform's month of games is never read whole to date a handful of merges."""
    ids = pl.concat([merges.get_column("keep_id"), merges.get_column("merge_id")])
    wanted = ids.cast(pl.String).drop_nulls().unique().implode()
    named = pl.col("white_id").is_in(wanted) | pl.col("black_id").is_in(wanted)
    return games.lazy().filter(named).collect(engine="streaming")


def _known_ids(
    games: pl.DataFrame, starting_lists: pl.DataFrame, players: pl.DataFrame | None
) -> pl.Series:
    """Every player id of a game (any source), a starting list or the registry."""
    ids = [
        games.get_column("white_id"),
        games.get_column("black_id"),
        starting_lists.get_column("player_id"),
    ]
    if players is not None:
        ids.append(players.get_column("player_id"))
    return pl.concat([s.cast(pl.String) for s in ids]).drop_nulls().unique()


def _first_periods(games: pl.DataFrame, starting_lists: pl.DataFrame) -> pl.DataFrame:
    """Per player id, the first period a federation or club list sees it: its first game's
    period, or the period after a starting list holding it."""
    rated = games.filter(NON_PLATFORM)
    after_list = (
        (pl.col("period") + "-01").str.to_date("%Y-%m-%d").dt.offset_by("1mo").dt.strftime("%Y-%m")
    )
    seen = pl.concat(
        [
            rated.select(pl.col("white_id").alias("player_id"), "period"),
            rated.select(pl.col("black_id").alias("player_id"), "period"),
            starting_lists.select("player_id", after_list.alias("period")),
        ]
    )
    return seen.drop_nulls().group_by("player_id").agg(pl.col("period").min())


def _unknown_check(col: str, known: pl.Series) -> pl.Expr:
    return ~pl.col(col).is_in(known.implode())


def resolve_merges(
    merges: pl.DataFrame,
    games: pl.DataFrame,
    starting_lists: pl.DataFrame,
    players: pl.DataFrame | None,
) -> IngestResult:
    """The merges in force, each with its `effective_period`, and the quarantine: merges naming an
    id in no game, no starting list and not in players.csv, and the games between a kept and a
    merged id (once merged, a player against themself: not rated)."""
    if not merges.height:
        return IngestResult(rows=empty(MERGES_SCHEMA))
    known = _known_ids(games, starting_lists, players)
    flagged = merges.with_columns(
        pl.when(_unknown_check("keep_id", known))
        .then(
            format_text(
                "keep_id '{}' is in no game, no starting list and not in players.csv",
                pl.col("keep_id"),
            )
        )
        .when(_unknown_check("merge_id", known))
        .then(
            format_text(
                "merge_id '{}' is in no game, no starting list and not in players.csv",
                pl.col("merge_id"),
            )
        )
        .alias("_reason"),
        pl.when(_unknown_check("keep_id", known))
        .then(pl.col("keep_id"))
        .otherwise(pl.col("merge_id"))
        .alias("_value"),
    )
    unknown = flagged.filter(pl.col("_reason").is_not_null()).select(
        "source_file",
        pl.col("source_line").alias("line"),
        pl.col("merge_id").alias("record"),
        pl.col("_value").alias("value"),
        pl.col("_reason").alias("reason"),
    )
    good = flagged.filter(pl.col("_reason").is_null()).drop("_reason", "_value")
    good, across = _across_identities(good, games, starting_lists)
    unknown = pl.concat([unknown, across]).sort("line", maintain_order=True)
    first = _first_periods(games, starting_lists)
    rows = good.drop("effective_period", strict=False).join(
        first.rename({"player_id": "merge_id", "period": "effective_period"}),
        on="merge_id",
        how="left",
    )
    quarantine = pl.concat([conform(unknown, QUARANTINE_SCHEMA), merged_self_games(games, rows)])
    return IngestResult(
        rows=conform(rows.sort("source_line"), MERGES_SCHEMA), quarantine=quarantine
    )


def _across_identities(
    merges: pl.DataFrame, games: pl.DataFrame, starting_lists: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(the merges kept, the quarantine of those joining an online account with a federation
    player): an id seen only in platform games is an account of a site, one in federation or
    club games or on a starting list is a federation's player; merging them would put the
    account on the federation's lists (or the FIDE id under a site's name), so it is refused."""

    def ids(frame: pl.DataFrame) -> pl.Series:
        sides = [frame.get_column(c).cast(pl.String) for c in ("white_id", "black_id")]
        return pl.concat(sides).drop_nulls().unique()

    federation = pl.concat(
        [ids(games.filter(NON_PLATFORM)), starting_lists.get_column("player_id").cast(pl.String)]
    ).unique()
    platform = ids(games.filter(~NON_PLATFORM))
    online_only = platform.filter(~platform.is_in(federation.implode()))

    def is_online(column: str) -> pl.Expr:
        return pl.col(column).is_in(online_only.implode())

    def is_federation(column: str) -> pl.Expr:
        return pl.col(column).is_in(federation.implode())

    online, other = pl.col("_online"), pl.col("_other")
    flagged = merges.with_columns(
        pl.when(is_online("keep_id") & is_federation("merge_id"))
        .then(pl.struct(pl.col("keep_id").alias("a"), pl.col("merge_id").alias("b")))
        .when(is_online("merge_id") & is_federation("keep_id"))
        .then(pl.struct(pl.col("merge_id").alias("a"), pl.col("keep_id").alias("b")))
        .alias("_pair")
    ).with_columns(
        pl.col("_pair").struct.field("a").alias("_online"),
        pl.col("_pair").struct.field("b").alias("_other"),
    )
    refused = flagged.filter(online.is_not_null()).select(
        "source_file",
        pl.col("source_line").alias("line"),
        pl.col("merge_id").alias("record"),
        format_text("{} and {}", "keep_id", "merge_id").alias("value"),
        format_text(
            "'{}' is an online account (platform games only) and '{}' a federation player "
            "(federation or club games, or a starting list): a platform's and a federation's "
            "identities are never merged",
            online,
            other,
        ).alias("reason"),
    )
    kept = flagged.filter(online.is_null()).drop("_pair", "_online", "_other")
    return kept, conform(refused, QUARANTINE_SCHEMA)


def merged_self_games(games: pl.DataFrame, merges: pl.DataFrame) -> pl.DataFrame:
    """Quarantine rows for the federation and club games between a merge's two ids."""
    pairs = merges.select("keep_id", "merge_id", "source_file", "source_line")
    both_ways = pl.concat(
        [
            pairs.rename({"keep_id": "white_id", "merge_id": "black_id"}),
            pairs.rename({"merge_id": "white_id", "keep_id": "black_id"}).select(
                "white_id", "black_id", "source_file", "source_line"
            ),
        ]
    ).rename({"source_file": "merges_file", "source_line": "merges_line"})
    hits = games.filter(NON_PLATFORM).join(both_ways, on=["white_id", "black_id"])
    return conform(
        hits.select(
            "source_file",
            pl.col("source_line").alias("line"),
            pl.col("game_id").alias("record"),
            format_text("{} vs {}", "white_id", "black_id").alias("value"),
            format_text(
                "a game between '{}' and '{}', one player since {} line {}: a player against "
                "themself is not rated",
                "white_id",
                "black_id",
                "merges_file",
                "merges_line",
            ).alias("reason"),
        ),
        QUARANTINE_SCHEMA,
    )
