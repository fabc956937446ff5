"""The causes a federation or club list's diff names: what of a period's inputs is new, changed
or gone since the list's last publication (issue 11 item 2: "late result: tournament T", a new
starting list; a club's tournaments under its own list, `club_period_inputs`).

After publishing a period, the federation assets record its inputs player by player
(`applied/<system>-inputs`): who played in which tournament, with a digest of each tournament's
games, and each entry of the starting list the period starts from. The next publication
compares the period's inputs with that record:

- a tournament that was not there: `late result: tournament T (standard)` for its players;
  one whose games differ: `changed results: tournament T (standard)`; one no longer there:
  `withdrawn: tournament T (standard)`;
- a starting list that was not there: `new starting list fide-standard@2026-01` for its players;
  an entry that differs or is new in a list already there: `changed starting list ...`; an entry
  no longer there: `removed from starting list ...`.

A rating officer's applied corrections are recorded the same way (`correction_inputs`), so a
revision names only the corrections new since its parent (`new_corrections`), never one its
parent already applied.

A site or FIBS list is computed from whole inbox files (a platform's monthly dump, a backgammon
export) rather than tournaments: its record holds, per period, each file with records in the
period and a digest of them (`file_inputs`), and a version names the files new, changed or gone
since (`file_causes`): `late result: games file platform/2026-07.pgn`, `changed results: games
file platform/games-2026.csv`, `withdrawn: games file platform/lichess-2026-03.pgn` (`matches
file` for backgammon), for every player the version moved (a null player_id).

A player moved only because an earlier period of the same publication changed gets
`carried from 2026-03: late result: tournament T (standard)` (`carried_causes`): the origin
period and what changed there, never the version's whole reason.
"""

from __future__ import annotations

import hashlib

import polars as pl

from rating_core.periods import previous_period
from rating_core.schemas import APPLIED_INPUTS_SCHEMA, TableSchema
from rating_core.text import format_text

TOURNAMENT = "tournament"
STARTING_LIST = "starting list"
CORRECTION = "correction"
FILE = "file"
"""Values of `source` in the record: what a row of inputs is."""

CAUSES_SCHEMA: TableSchema = {"list": pl.String, "player_id": pl.String, "cause": pl.String}
"""Causes per list and player: a standard tournament is a cause on the standard lists only."""

DIGESTED_COLUMNS = (
    "game_id",
    "round",
    "played_at",
    "white_id",
    "black_id",
    "result",
    "rating_list",
    "rated",
    "status",
)
"""The game columns whose change makes a tournament's results changed."""

ENTRY_COLUMNS = ("rating", "rated_games", "peak_rating")
"""The starting-list columns whose change makes a player's entry changed."""


def tournament_players(games: pl.DataFrame) -> pl.DataFrame:
    """Who played in which tournament of `games` (one period's), with each tournament's rating
    lists and the digest of its games (`APPLIED_INPUTS_SCHEMA`)."""
    games = games.filter(pl.col("tournament_id").is_not_null())
    if not games.height:
        return pl.DataFrame(schema=APPLIED_INPUTS_SCHEMA)
    fields = [pl.col(c).cast(pl.String).fill_null("") for c in DIGESTED_COLUMNS]
    per_tournament = (
        games.with_columns(pl.concat_str(fields, separator="\x1f").alias("_game"))
        .group_by("tournament_id")
        .agg(
            pl.col("_game").sort().str.join("\x1e").alias("_games"),
            pl.col("rating_list").cast(pl.String).drop_nulls().unique().sort().str.join("/"),
        )
    )
    digests = [  # one hash per tournament, not per game
        hashlib.sha256(text.encode("utf-8")).hexdigest()
        for text in per_tournament.get_column("_games")
    ]
    per_tournament = per_tournament.drop("_games").with_columns(
        pl.Series("digest", digests, dtype=pl.String)
    )
    players = pl.concat(
        [
            games.select("tournament_id", pl.col("white_id").alias("player_id")),
            games.select("tournament_id", pl.col("black_id").alias("player_id")),
        ]
    ).drop_nulls()
    return (
        players.unique()
        .join(per_tournament, on="tournament_id")
        .select(
            pl.lit(TOURNAMENT).alias("source"),
            pl.col("tournament_id").alias("name"),
            "rating_list",
            "player_id",
            "digest",
        )
        .sort("name", "player_id")
    )


def starting_list_players(starting_lists: pl.DataFrame, system: str, period: str) -> pl.DataFrame:
    """The entries of the `system`'s starting lists that `period` starts from (those official
    after the period before it), one row per player and list (`APPLIED_INPUTS_SCHEMA`)."""
    if not starting_lists.height:
        return pl.DataFrame(schema=APPLIED_INPUTS_SCHEMA)
    entries = starting_lists.filter(
        pl.col("list").str.starts_with(f"{system}-") & (pl.col("period") == previous_period(period))
    )
    fields = [pl.col(c).cast(pl.String).fill_null("") for c in ENTRY_COLUMNS]
    return entries.select(
        pl.lit(STARTING_LIST).alias("source"),
        format_text("{}@{}", "list", "period").alias("name"),
        pl.col("list").str.strip_prefix(f"{system}-").alias("rating_list"),
        pl.col("player_id").cast(pl.String),
        pl.concat_str(fields, separator="/").alias("digest"),
    ).sort("name", "player_id")


def period_inputs(
    games: pl.DataFrame, starting_lists: pl.DataFrame, system: str, period: str
) -> pl.DataFrame:
    """Every input of `period` player by player: its tournaments (`games` are the period's) and
    the starting lists it starts from, as the record of a publication keeps them."""
    return pl.concat(
        [tournament_players(games), starting_list_players(starting_lists, system, period)]
    )


def club_period_inputs(
    games: pl.DataFrame, starting_lists: pl.DataFrame, system: str, period: str
) -> pl.DataFrame:
    """A club period's inputs: its tournaments, each under its club's list (`rating_list`
    `ankara-sk-standard`, so that the causes land on `club-ankara-sk-standard`). Clubs start
    from no starting list."""
    from rating_core.systems.club.folders import club_slug

    clubs = games.get_column("club_id").drop_nulls().unique().to_list()
    slugs = {club: club_slug(club) for club in clubs}  # one per club, not per game
    listed = games.filter(pl.col("club_id").is_not_null()).with_columns(
        format_text(
            "{}-{}",
            pl.col("club_id").replace_strict(slugs, return_dtype=pl.String),
            pl.col("rating_list").cast(pl.String),
        ).alias("rating_list")
    )
    return tournament_players(listed)


def _label(frame: pl.DataFrame, what: str, with_list: bool) -> pl.DataFrame:
    """`what: tournament T (standard)` or `what NAME` for each (player_id, name) row, with the
    row's rating lists."""
    if with_list:
        text = format_text("{}: tournament {} ({})", pl.lit(what), "name", "rating_list")
    else:
        text = format_text("{} {}", pl.lit(what), "name")
    return frame.select("rating_list", "player_id", text.alias("cause"))


def _tournament_causes(now: pl.DataFrame, before: pl.DataFrame) -> list[pl.DataFrame]:
    """Players of tournaments new, changed (digest) or gone since `before`."""
    whole_now = now.select("name", "rating_list", "digest").unique()
    whole_before = before.select("name", "rating_list", "digest").unique()
    new = whole_now.join(whole_before, on="name", how="anti")
    changed = whole_now.join(whole_before.select("name", old="digest"), on="name").filter(
        pl.col("digest") != pl.col("old")
    )
    gone = whole_before.join(whole_now, on="name", how="anti")
    players_now, players_before = (
        now.select("name", "player_id"),
        before.select("name", "player_id"),
    )
    return [
        _label(new.join(players_now, on="name"), "late result", True),
        _label(changed.join(players_now, on="name"), "changed results", True),
        _label(gone.join(players_before, on="name"), "withdrawn", True),
    ]


def _starting_list_causes(now: pl.DataFrame, before: pl.DataFrame) -> list[pl.DataFrame]:
    """Players on a starting list new since `before`, or whose entry is new, changed or gone."""
    known = before.select("name").unique()
    new_list = now.join(known, on="name", how="anti")
    in_known = now.join(known, on="name")
    entry_key = ["name", "player_id"]
    changed = in_known.join(
        before.select(*entry_key, old="digest"), on=entry_key, how="left"
    ).filter(pl.col("old").is_null() | (pl.col("digest") != pl.col("old")))
    removed = before.join(now, on=entry_key, how="anti")
    return [
        _label(new_list, "new starting list", False),
        _label(changed, "changed starting list", False),
        _label(removed, "removed from starting list", False),
    ]


def input_causes(
    current: pl.DataFrame, applied: pl.DataFrame | None, system: str
) -> pl.DataFrame | None:
    """Per list of `system` and player, what of the period's inputs is new, changed or gone
    since the `applied` record (the causes above, sorted and joined with `; `; an input of the
    standard list is a cause on `<system>-standard` only); None without a record (then every
    diff row gives the version's reason)."""
    if applied is None:
        return None

    def of(frame: pl.DataFrame, source: str) -> pl.DataFrame:
        return frame.filter(pl.col("source") == source)

    causes = pl.concat(
        [
            *_tournament_causes(of(current, TOURNAMENT), of(applied, TOURNAMENT)),
            *_starting_list_causes(of(current, STARTING_LIST), of(applied, STARTING_LIST)),
        ]
    )
    if not causes.height:
        return pl.DataFrame(schema=CAUSES_SCHEMA)
    return (
        causes.with_columns(pl.col("rating_list").str.split("/"))
        .explode("rating_list")
        .select(
            format_text("{}-{}", pl.lit(system), "rating_list").alias("list"), "player_id", "cause"
        )
        .unique()
        .group_by("list", "player_id")
        .agg(pl.col("cause").sort().str.join("; "))
        .sort("list", "player_id")
    )


# --- inbox files (platform games, backgammon matches) ------------------------------------------

FILE_CAUSES_SCHEMA: TableSchema = {"player_id": pl.String, "cause": pl.String}
"""Causes that hold for every player a version moved (a null player_id)."""


def file_inputs(files: pl.DataFrame, kind: str) -> pl.DataFrame:
    """One period's files (`name`, `digest`: `lake.file_inputs.FILE_INPUTS_SCHEMA`) as inputs
    to record (`APPLIED_INPUTS_SCHEMA`): one row per file, `kind` (`games`, `matches`) in the
    `rating_list` column, no player."""
    return files.select(
        pl.lit(FILE).alias("source"),
        pl.col("name").cast(pl.String),
        pl.lit(kind).alias("rating_list"),
        pl.lit(None, dtype=pl.String).alias("player_id"),
        pl.col("digest").cast(pl.String),
    ).sort("name")


def file_causes(current: pl.DataFrame, applied: pl.DataFrame | None) -> pl.DataFrame | None:
    """The files of a period new, changed (digest) or gone since the `applied` record, as
    causes for every player (`late result: games file F`, `changed results: ...`,
    `withdrawn: ...`; FILE_CAUSES_SCHEMA), sorted; None without a record (the period's first
    publication: the version's reason says so)."""
    if applied is None:
        return None
    now = current.filter(pl.col("source") == FILE).select("name", "rating_list", "digest")
    before = applied.filter(pl.col("source") == FILE).select("name", "rating_list", "digest")
    new = now.join(before, on="name", how="anti")
    changed = now.join(before.select("name", old="digest"), on="name").filter(
        pl.col("digest") != pl.col("old")
    )
    gone = before.join(now, on="name", how="anti")

    def labelled(frame: pl.DataFrame, what: str) -> pl.DataFrame:
        text = format_text("{}: {} file {}", pl.lit(what), "rating_list", "name")
        return frame.select(pl.lit(None, dtype=pl.String).alias("player_id"), text.alias("cause"))

    causes = pl.concat(
        [
            labelled(new, "late result"),
            labelled(changed, "changed results"),
            labelled(gone, "withdrawn"),
        ]
    )
    return causes.unique().sort("cause")


# --- corrections ---------------------------------------------------------------------------------

_CORRECTION_FIELDS = ("value", "new", "reason")
"""The correction-log columns whose change makes a correction new."""


def correction_inputs(log: pl.DataFrame) -> pl.DataFrame:
    """The applied corrections of a period's log (CORRECTION_LOG_SCHEMA) as inputs to record
    (`APPLIED_INPUTS_SCHEMA`): name `list field`, the list's kind, the player, a digest."""
    applied = log.filter(pl.col("applied")) if log.height else log
    if not applied.height:
        return pl.DataFrame(schema=APPLIED_INPUTS_SCHEMA)
    fields = [pl.col(c).cast(pl.String).fill_null("") for c in _CORRECTION_FIELDS]
    return applied.select(
        pl.lit(CORRECTION).alias("source"),
        format_text("{} {}", "list", "field").alias("name"),
        pl.col("list").str.split("-").list.last().alias("rating_list"),
        pl.col("player_id").cast(pl.String),
        pl.concat_str(fields, separator="\x1f").alias("digest"),
    ).cast(APPLIED_INPUTS_SCHEMA)


def new_corrections(log: pl.DataFrame, applied: pl.DataFrame | None) -> pl.DataFrame:
    """The rows of a period's correction `log` that are not applied corrections of the
    `applied` record (None: no record, the period's first publication: every row)."""
    if applied is None or not log.height:
        return log
    known = applied.filter(pl.col("source") == CORRECTION).select("name", "player_id", "digest")
    if not known.height:
        return log
    mine = correction_inputs(log).select("name", "player_id", "digest")
    fields = [pl.col(c).cast(pl.String).fill_null("") for c in _CORRECTION_FIELDS]
    keyed = log.with_columns(
        format_text("{} {}", "list", "field").alias("_name"),
        pl.concat_str(fields, separator="\x1f").alias("_digest"),
    )
    seen = mine.join(known, on=["name", "player_id", "digest"], how="semi")
    return keyed.join(
        seen.rename({"name": "_name", "digest": "_digest"}),
        on=["_name", "player_id", "_digest"],
        how="anti",
        maintain_order="left",
    ).drop("_name", "_digest")


# --- changes carried into later periods ---------------------------------------------------------

CARRIED_MOST = 3
"""How many of an origin period's causes a carried cause names before `and N more`."""


def _summary(causes: pl.Series) -> str:
    """The distinct causes of one origin, sorted: `a; b; c and 2 more`."""
    distinct = sorted(
        {part for text in causes.drop_nulls().to_list() for part in str(text).split("; ")}
    )
    shown = "; ".join(distinct[:CARRIED_MOST])
    more = len(distinct) - CARRIED_MOST
    return f"{shown} and {more} more" if more > 0 else shown


def carried_causes(origins: list[tuple[str, pl.DataFrame | None]]) -> pl.DataFrame | None:
    """The fallback causes of a later period's diff, from the own causes (`list`, player_id,
    cause) of the earlier periods of the same publication, oldest first: per list,
    `carried from 2026-03: late result: tournament T (standard)` (each origin with causes on
    that list, joined with `; `), with a null player_id (every player the period's own causes
    do not name). A cause without a list (a merge) is carried on every list. None when no
    earlier period had a cause."""
    rows: list[dict[str, object]] = []
    for period, causes in origins:
        if causes is None or not causes.height:
            continue
        lists = causes.get_column("list") if "list" in causes.columns else None
        if lists is None:
            groups = [(None, causes)]
        else:
            groups = [
                (name, part) for (name,), part in causes.group_by("list", maintain_order=True)
            ]
        for name, part in groups:
            text = _summary(part.get_column("cause"))
            if text:
                rows.append({"list": name, "cause": f"carried from {period}: {text}"})
    if not rows:
        return None
    frame = pl.DataFrame(rows, schema={"list": pl.String, "cause": pl.String})
    return (
        frame.group_by("list", maintain_order=True)
        .agg(pl.col("cause").str.join("; "))
        .select("list", pl.lit(None, dtype=pl.String).alias("player_id"), "cause")
    )


def joined_causes(found: list[pl.DataFrame | None]) -> pl.DataFrame | None:
    """The cause frames that have rows, in one frame (None when none has): a version's causes
    gathered from its several kinds of input."""
    frames = [f for f in found if f is not None and f.height]
    return pl.concat(frames, how="diagonal_relaxed") if frames else None
