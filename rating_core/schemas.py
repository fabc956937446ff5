"""Canonical table schemas, declared once and validated at the boundaries (DESIGN §3).

Every reader returns frames with exactly these columns and dtypes; every engine takes them.
Closed sets are `pl.Enum` so that a typo is an error, not a new category.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

import polars as pl
from polars.datatypes import DataTypeClass

TableSchema: TypeAlias = Mapping[Any, pl.DataType | DataTypeClass]
"""A table's columns and dtypes (`pl.String` or `pl.Enum([...])`), in order; the constants are
plain dicts, typed read-only. The keys are column names, typed Any because polars annotates `cast`
with a mapping whose key type is a union and mapping keys are invariant, so a `dict[str, ...]` is
refused (pola-rs/polars#14468)."""

# --- closed sets -------------------------------------------------------------------------------

RESULTS = ["1-0", "0-1", "1/2-1/2", "+-", "-+", "--", "bye"]
"""Recorded results: the three played ones, forfeits (`+-` white wins by forfeit, `-+` black,
`--` both forfeit) and a bye (one player, no opponent)."""

PLAYED_RESULTS = ("1-0", "0-1", "1/2-1/2")
"""Results of a game played on the board (not a forfeit, not a bye)."""

SCORE_BY_RESULT: dict[str, float] = {
    "1-0": 1.0,
    "0-1": 0.0,
    "1/2-1/2": 0.5,
    "+-": 1.0,
    "-+": 0.0,
    "--": 0.0,
}
"""White's score S (RULES §0) of every recorded result but a bye (no opponent, no score): the
one result-to-score table, read by the canonical games, the readers and the calculators."""

RESULT_BY_SCORE: dict[float, str] = {SCORE_BY_RESULT[r]: r for r in PLAYED_RESULTS}
"""The played result of white's score: 1.0 -> `1-0`, 0.5 -> `1/2-1/2`, 0.0 -> `0-1`."""

SCORE_BY_RESULT_WORD: dict[str, float] = {
    **{result: SCORE_BY_RESULT[result] for result in PLAYED_RESULTS},
    **{"1": 1.0, "1/2": 0.5, "½": 0.5, "0.5": 0.5, "0": 0.0},
    **{"win": 1.0, "w": 1.0, "draw": 0.5, "d": 0.5, "loss": 0.0, "l": 0.0},
}
"""A result as a player writes it about their own game, lowercase (calculators): a played
result read from the player's side (`1-0` is a win), the score itself, or a word."""

STATUSES = ["finished", "aborted", "forfeit", "bye", "annulled"]
CATEGORIES = ["classical", "rapid", "blitz", "bullet", "unlimited", "correspondence", "otb", "bots"]
RATING_LISTS = ["standard", "rapid", "blitz"]
TERMINATIONS = [
    "normal",
    "resign",
    "timeout",
    "abandon",
    "abort",
    "bot_no_move",
    "expired",
    "unknown",
]
KINDS = ["live", "otb", "correspondence", "unlimited"]
SOURCES = ["platform", "federation", "club"]
FORMATS = ["pgn", "csv", "trf"]
SITE_VERDICTS = [
    "rated",
    "moderation",
    "casual",
    "aborted",
    "status_annulled",
    "forfeit",
    "bye",
    "abort_termination",
    "few_plies",
    "otb",
    "both_bots",
    "bot_no_move",
    "bot_rating",
    "unrated",
]
"""What the site rules (RULES §2) decide of a kept platform game at ingest: rated, or the
exclusion (`systems.site.rules.Exclusion`, whose code is the index here). Moderation is never
stored (a decision can come after ingest: the rating applies it)."""

Result = pl.Enum(RESULTS)
Status = pl.Enum(STATUSES)
Category = pl.Enum(CATEGORIES)
RatingList = pl.Enum(RATING_LISTS)
Termination = pl.Enum(TERMINATIONS)
Kind = pl.Enum(KINDS)
Source = pl.Enum(SOURCES)
Format = pl.Enum(FORMATS)
SiteVerdict = pl.Enum(SITE_VERDICTS)

UTC_TIME = pl.Datetime("us", "UTC")

# --- raw games: what every game reader returns, before classification ---------------------------

RAW_GAMES_SCHEMA: TableSchema = {
    "game_id": pl.String,  # explicit id, else derived (file stem + ordinal)
    "source_file": pl.String,
    "source_line": pl.Int64,  # 1-based line where the record starts
    "format": Format,
    "tournament_id": pl.String,  # null for platform games
    "tournament_end": pl.Date,  # TRF tag 052 or null (then the last game's date is used)
    "round": pl.Int32,
    "played_at": UTC_TIME,
    "white_id": pl.String,
    "black_id": pl.String,  # null for a bye
    "white_name": pl.String,
    "black_name": pl.String,
    "white_id_from_name": pl.Boolean,  # the id is only the name (no explicit id / FIDE id)
    "black_id_from_name": pl.Boolean,
    "result": Result,
    "time_control": pl.String,  # PGN TimeControl syntax, null when absent
    "days_per_move": pl.Int32,
    "rating_list": RatingList,  # explicit list (CSV column) or null
    "rated": pl.Boolean,  # casual games are False
    "kind": Kind,
    "otb_confirmed": pl.Boolean,
    "plies": pl.Int32,  # null when unknown (then the game counts as played)
    "termination": Termination,
    "white_elo": pl.Int32,  # rating tags as recorded (used for a bot's fixed rating)
    "black_elo": pl.Int32,
    "white_is_bot": pl.Boolean,  # PGN title BOT
    "black_is_bot": pl.Boolean,
    "event": pl.String,
    "extra": pl.String,  # unknown extra CSV columns / tags, JSON-encoded provenance
    "unrated_reason": pl.String,  # why a kept game is not rated (a chess variant...), else null
}

# --- canonical games (DESIGN §3) -------------------------------------------------------------------

GAMES_SCHEMA: TableSchema = {
    "game_id": pl.String,
    "source": Source,
    "club_id": pl.String,
    "source_file": pl.String,
    "source_line": pl.Int64,
    "tournament_id": pl.String,
    "round": pl.Int32,
    "played_at": UTC_TIME,
    "period": pl.String,  # YYYY-MM (tournament games: month of the tournament's end)
    "white_id": pl.String,
    "black_id": pl.String,
    "white_name": pl.String,
    "black_name": pl.String,
    "result": Result,
    "white_score": pl.Float64,  # 1, 0.5, 0; null for a bye
    "time_control": pl.String,
    "base_s": pl.Int64,
    "increment_s": pl.Int64,
    "estimate_s": pl.Int64,  # base + 40 x increment (RULES §1)
    "days_per_move": pl.Int32,
    "category": Category,  # site category (platform games)
    "rating_list": RatingList,  # FIDE/UKD list (federation and club games)
    "rated": pl.Boolean,
    "status": Status,
    "plies": pl.Int32,
    "termination": Termination,
    "kind": Kind,
    "otb_confirmed": pl.Boolean,
    "white_elo": pl.Int32,
    "black_elo": pl.Int32,
    "white_is_bot": pl.Boolean,
    "black_is_bot": pl.Boolean,
    "unrated_reason": pl.String,  # set by a reader: kept in the table, never rated, and why
    # The site rules' classification of a platform game, made once at ingest (null for the
    # federation and club games): what the site rating reads instead of classifying again.
    # Each depends on the game and the registry's bots only (a registry change reads the
    # platform files again); moderation is applied by the rating.
    "site_verdict": SiteVerdict,  # rated, or why kept unrated (moderation aside)
    "site_white_bot": pl.Boolean,  # white is a bot (its BOT title or the registry)
    "site_black_bot": pl.Boolean,
    "site_bot_rating": pl.Float64,  # the bot side's fixed rating (white's if both), else null
    "site_score": pl.Float64,  # white's score as rated (a bot's missing move: a human loss)
    "site_category": Category,  # the category rated (bots for any game with a bot)
}

# --- quarantine (DESIGN §4) -------------------------------------------------------------------------

QUARANTINE_SCHEMA: TableSchema = {
    "source_file": pl.String,
    "line": pl.Int64,  # 1-based line (or record number where a format has no lines)
    "record": pl.String,  # game id, player id or other record key when known
    "value": pl.String,  # the offending value
    "reason": pl.String,  # a sentence a person understands
}

# --- registry and other inputs ----------------------------------------------------------------

PLAYERS_SCHEMA: TableSchema = {
    "player_id": pl.String,
    "name": pl.String,
    "federation": pl.String,
    "sex": pl.String,
    "birth_year": pl.Int32,  # from birth_date (`YYYY` or `YYYY-MM-DD`)
    "title": pl.String,
    "fide_id": pl.String,
    "is_bot": pl.Boolean,
    "bot_rating": pl.Int32,
    "email_verified": pl.Boolean,
    "display_name": pl.String,
}

STARTING_LIST_SCHEMA: TableSchema = {
    "list": pl.String,  # e.g. fide-standard, ukd-blitz
    "period": pl.String,  # the period after which this list is official
    "player_id": pl.String,
    "rating": pl.Int32,
    "rated_games": pl.Int32,  # FIDE only (career count), null for UKD
    "peak_rating": pl.Int32,  # FIDE only, null for UKD
    # the player data a list gives (FIDE's TXT and XML downloads; optional CSV columns), each
    # null when the list does not say: a list row's player data after the registry's
    "name": pl.String,  # as the list writes it: a list row's name when nothing else names them
    "birth_year": pl.Int32,
    "federation": pl.String,
    "sex": pl.String,  # M or F
    "title": pl.String,  # GM, IM, FM, CM, WGM...
    "w_title": pl.String,  # a woman's title (WGM, WIM, WFM, WCM)
    "o_title": pl.String,  # other titles (IA, FA, FT...)
    "foa_title": pl.String,  # FIDE Online Arena title (AGM, AIM...)
    "flag": pl.String,  # FIDE's flag: i (inactive), w (woman), wi
}

MODERATION_SCHEMA: TableSchema = {
    "game_id": pl.String,
    "decided_at": UTC_TIME,
    "decision": pl.Enum(["annul"]),
    "reason": pl.String,
    "source_file": pl.String,
    "source_line": pl.Int64,
}

CORRECTIONS_SCHEMA: TableSchema = {
    "list": pl.String,
    "period": pl.String,  # the list after this period is corrected
    "player_id": pl.String,
    "field": pl.String,  # one of ingest.corrections.CORRECTION_FIELDS
    "value": pl.String,  # as written
    "number": pl.Int32,  # the value as a number (a birth date: its year)
    "reason": pl.String,
    "source_file": pl.String,
    "source_line": pl.Int64,
}
"""The canonical `corrections` table, one row per correction that passed ingest."""

MERGES_SCHEMA: TableSchema = {
    "keep_id": pl.String,  # the id that stays
    "merge_id": pl.String,  # the duplicate id, whose games and entries become keep_id's
    "decided_at": pl.Date,
    "reason": pl.String,
    "source_file": pl.String,
    "source_line": pl.Int64,
    # the first period holding a game of merge_id, or computed from a starting list holding it
    # (the period after the list's); null when merge_id is only in players.csv (nothing changes)
    "effective_period": pl.String,
}
"""The canonical `merges` table, one row per merge in force."""

FILE_SUMMARY_SCHEMA: TableSchema = {
    "kind": pl.String,
    "source_file": pl.String,
    "ingested": pl.Int64,
    "quarantined": pl.Int64,
    "notes": pl.String,
}
"""One row per inbox file an ingest step read, as the step returns it (before the `asset` tag)."""

APPLIED_INPUTS_SCHEMA: TableSchema = {
    "source": pl.String,
    "name": pl.String,
    "rating_list": pl.String,
    "player_id": pl.String,
    "digest": pl.String,
}
"""One row per player per input of a period: a tournament (its id, the digest of its games), the
starting list the period starts from (`list@YYYY-MM`, the player's entry as digest) or an applied
correction (`list field`, the digest of its value, result and reason)."""

APPLIED_ANNULMENTS_SCHEMA: TableSchema = {
    "game_id": pl.String,
    "white_id": pl.String,
    "black_id": pl.String,
    "label": pl.String,
}
"""The annulments a publication applied: one row per annulled game with its decision's label."""

TRF_PLAYERS_SCHEMA: TableSchema = {
    "player_id": pl.String,  # FIDE id when non-zero, else the name
    "name": pl.String,
    "fide_id": pl.String,
    "federation": pl.String,
    "sex": pl.String,
    "birth_year": pl.Int32,
    "title": pl.String,
    "rating": pl.Int32,  # the rating in the TRF, null when 0 or blank
    "start_rank": pl.Int32,
}
"""The players of the TRF files' `001` records (`tournament_players`), one row per player per
file."""

MATCHES_SCHEMA: TableSchema = {
    "match_id": pl.String,
    "ended_at": UTC_TIME,
    "period": pl.String,
    "winner_id": pl.String,
    "loser_id": pl.String,
    "length": pl.Int32,
    "ranked": pl.Boolean,
    "vs_ai": pl.Boolean,
    "source_file": pl.String,
    "source_line": pl.Int64,
}


def empty(schema: TableSchema) -> pl.DataFrame:
    """An empty frame with the given schema (the answer of a reader that found nothing)."""
    return pl.DataFrame(schema=schema)


def conform(frame: pl.DataFrame, schema: TableSchema) -> pl.DataFrame:
    """Select the schema's columns in order and cast them; missing columns become nulls.

    Raises `ValueError` naming the columns that are not in the schema-compatible form, so that a
    reader bug fails loudly at the boundary instead of deep in an engine.
    """
    cols = []
    for name, dtype in schema.items():
        if name in frame.columns:
            cols.append(pl.col(name).cast(dtype, strict=True))
        else:
            cols.append(pl.lit(None, dtype=dtype).alias(name))
    return frame.select(cols)
