"""Which list a tournament goes on, and results that arrive late (RULES §3.4), as data and pure
functions: the run's configuration passes a `LateResultsPolicy` down to the engines.

- `LateResultsPolicy`: the policy of each list family (`fide`, `ukd`, `club`, `site`, `fibs`),
  `revise` or `next_list`; FIDE defaults to `next_list` (FIDE never republishes a list), the
  others to `revise`. `late_results_policy(table, source)` reads a plain mapping (the
  `[late_results]` table of `ratings.toml`) and refuses a bad key or value with a
  `LateResultsError` naming the file, the key and the value. `as_manifest()` is what each
  manifest records.
- `fide_closing_period(end)` / `fide_closing_period_expr(end)`: FIDE's closing date (§7.1.3): a
  tournament ending on one of the last two days of a month goes on the next period's list;
  `fide_list_periods(games)` moves such a tournament's games to that period (FIDE lists only:
  UKD and club tournaments keep the month of their end date).
- `place_late_tournament(own_period, published, policy)`: where a result that arrives after its
  period's list was published is rated: its own period again (`revise`), the first unpublished
  period (`next_list`), or nowhere, too late (FIDE §9.1, the third list after the tournament).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, fields
from datetime import date, timedelta
from typing import Literal

import polars as pl

from rating_core.periods import next_period, period_index, period_of_date
from rating_core.text import format_text

Policy = Literal["revise", "next_list"]
REVISE: Policy = "revise"
NEXT_LIST: Policy = "next_list"
POLICIES: tuple[str, ...] = (REVISE, NEXT_LIST)

CLOSING_DAYS = 3
"""FIDE §7.1.3: "The closing date for tournaments for a list is 3 days before the date of the
list"; the list of period P is dated the first day of P + 1."""

LATEST_LIST = 3
"""FIDE §9.1: a tournament not in time for the third list after it ends is not rated."""

TOO_LATE = "too late to be rated: FIDE §9.1, third list after the tournament"
"""The quarantine reason of a FIDE tournament past the third list (RULES §3.4's wording)."""


class LateResultsError(ValueError):
    """A `[late_results]` key or value the policy does not know; the message is one sentence
    for the user, naming the file, the key and the value."""


@dataclass(frozen=True)
class LateResultsPolicy:
    """The late-results policy of each list family (RULES §3.4): `revise` recomputes and
    republishes the period and every later one; `next_list` rates the tournament on the first
    period whose list is not yet published (and not at all after the third list). A rating
    officer's corrections and merges and moderation decisions always revise, under either."""

    fide: Policy = NEXT_LIST
    ukd: Policy = REVISE
    club: Policy = REVISE
    site: Policy = REVISE
    fibs: Policy = REVISE

    def of(self, list_name: str) -> Policy:
        """The policy of a published list (`fide-standard`, `club-x-blitz`, `site-elo`, `fibs`)."""
        family = list_name.split("-", 1)[0]
        if family not in FAMILIES:
            raise ValueError(f"no list family for list {list_name!r}")
        policy: Policy = getattr(self, family)
        return policy

    def as_manifest(self, list_name: str) -> dict[str, object]:
        """What a manifest of `list_name` records: its family's policy and, under `next_list`,
        the last list a late tournament may still go on."""
        policy = self.of(list_name)
        record: dict[str, object] = {"late_results": policy}
        if policy == NEXT_LIST:
            record["late_results_until"] = f"list {LATEST_LIST} after the tournament"
        return record

    def as_json(self) -> str:
        """The policy as a JSON object (family → policy), as a run's configuration carries it
        to the assets (`PipelinePaths.late_results`); `late_results_policy` reads it back."""
        return json.dumps(asdict(self), sort_keys=True)


FAMILIES: tuple[str, ...] = tuple(f.name for f in fields(LateResultsPolicy))
"""The list families a policy is set for, in the order of `[late_results]`'s documentation."""

DEFAULT_POLICY = LateResultsPolicy()


def late_results_policy(
    table: Mapping[str, object] | None, source: str = "ratings.toml"
) -> LateResultsPolicy:
    """The policy of a `[late_results]` table (family = "revise" | "next_list"), the defaults
        for the families it leaves out. An unknown family or value raises `LateResultsError`:
        `ratings.toml: [late_results] fide = "later" is not a policy (revise or next_list)` (the
    value as TOML writes it)."""
    if table is None:
        return DEFAULT_POLICY
    if not isinstance(table, Mapping):
        raise LateResultsError(
            f"{source}: late_results must be a table ([late_results] with lines like "
            f'fide = "next_list"), not {table!r}'
        )
    chosen: dict[str, Policy] = {}
    for key, value in table.items():
        if key not in FAMILIES:
            raise LateResultsError(
                f"{source}: [late_results] {key} is not a list family ({', '.join(FAMILIES)})"
            )
        if not isinstance(value, str) or value not in POLICIES:
            shown = json.dumps(value) if isinstance(value, str | int | float | bool) else value
            raise LateResultsError(
                f"{source}: [late_results] {key} = {shown} is not a policy "
                f"({' or '.join(POLICIES)})"
            )
        chosen[key] = value  # type: ignore[assignment]
    return LateResultsPolicy(**{**asdict(DEFAULT_POLICY), **chosen})


# --- the closing date ---------------------------------------------------------------------------


def fide_closing_period(end: date) -> str:
    """The period whose FIDE list a tournament ending on `end` goes on (§7.1.3): the list of
    period P is dated the first day of P + 1 and closes 3 days before, so a tournament ending
    on one of the last two days of a month goes on the next period's list."""
    return period_of_date(end + timedelta(days=CLOSING_DAYS - 1))


def fide_closing_period_expr(end: pl.Expr) -> pl.Expr:
    """`fide_closing_period` of a Date or Datetime column, as `YYYY-MM` strings."""
    return end.dt.offset_by(f"{CLOSING_DAYS - 1}d").dt.strftime("%Y-%m")


def fide_list_periods(games: pl.DataFrame) -> pl.DataFrame:
    """`games` (GAMES_SCHEMA) with `period` the period of the FIDE list each goes on (RULES
    §3.4): the closing date of its tournament's end (a game outside a tournament: its own date),
    never earlier than the period it had.

    Decision: the end date is the tournament's last game (the games table keeps no TRF end
    date apart from the period it gave); a TRF end in a later month than the last game keeps
    that later period.
    """
    if not games.height:
        return games
    event = pl.coalesce(pl.col("tournament_id"), pl.col("game_id"))
    closing = fide_closing_period_expr(pl.col("played_at").max().over(event))
    period = pl.col("period")
    return games.with_columns(
        pl.when(closing.is_not_null() & (closing > period))
        .then(closing)
        .otherwise(period)
        .alias("period")
    )


# --- results that arrive late ------------------------------------------------------------------


@dataclass(frozen=True)
class Placement:
    """Where a late tournament is rated: `period` (None: not rated), and why (`reason`)."""

    period: str | None
    reason: str


def place_late_tournament(
    own_period: str, published: Collection[str], policy: Policy, name: str = "the tournament"
) -> Placement:
    """Where a tournament of `own_period` is rated when its results arrive now, with the
    periods of `published` already published on its list (RULES §3.4).

    Not late (its own period unpublished) or `revise`: its own period (a revision when
    published). `next_list`: the first period from `own_period` on whose list is not yet
    published, while that is at most the third list after the tournament (`own_period` + 2);
    otherwise not rated, with FIDE §9.1 named.
    """
    period_index(own_period)  # a malformed period raises ValueError
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    if own_period not in published:
        return Placement(own_period, f"{name} is in time for the list of {own_period}")
    if policy == REVISE:
        return Placement(own_period, f"{name} revises the list of {own_period} (revise)")
    target = own_period
    while target in published:
        target = next_period(target)
    lists_after = period_index(target) - period_index(own_period) + 1
    if lists_after > LATEST_LIST:
        return Placement(None, f"{name} of {own_period}: {TOO_LATE}")
    return Placement(
        target,
        f"{name} of {own_period} arrived after its list: rated on the list of {target} "
        f"(next_list, list {lists_after} after the tournament)",
    )


TOURNAMENT_PLACEMENT_SCHEMA = {"tournament_id": pl.String, "placed": pl.String}
"""Where each late FIDE tournament goes: `placed` a period, or null when too late (§9.1)."""


def late_fide_placements(
    games: pl.DataFrame, recorded: pl.DataFrame, published: Collection[str], policy: Policy
) -> pl.DataFrame:
    """The tournaments of `games` (FIDE list periods, `fide_list_periods`) that do not go on
    their own period's list, and where they go (TOURNAMENT_PLACEMENT_SCHEMA), RULES §3.4.

    `recorded` (tournament_id, period): the tournaments the published FIDE lists rated, and on
    which period; `published`: the periods whose FIDE list is published. A recorded tournament
    stays on the period that rated it (a change to its games revises that period, as a
    correction would). Under `next_list`, a tournament not recorded whose own period is
    published goes on the first unpublished period, or nowhere (null) past the third list.
    Under `revise` nothing moves. Games outside a tournament are never moved (no record names
    them)."""
    placements = pl.DataFrame(schema=TOURNAMENT_PLACEMENT_SCHEMA)
    if policy == REVISE or not games.height:
        return placements
    own = (
        games.filter(pl.col("tournament_id").is_not_null())
        .group_by("tournament_id")
        .agg(pl.col("period").max().alias("own"))
    )
    where = (
        recorded.select(pl.col("tournament_id").cast(pl.String), pl.col("period").cast(pl.String))
        .group_by("tournament_id")
        .agg(pl.col("period").min().alias("recorded"))
    )
    own = own.join(where, on="tournament_id", how="left")
    moved = own.filter(pl.col("recorded").is_not_null() & (pl.col("recorded") != pl.col("own")))
    late = own.filter(pl.col("recorded").is_null() & pl.col("own").is_in(list(published)))
    placed = [  # one per late tournament: a handful, never per game
        place_late_tournament(period, published, NEXT_LIST).period
        for period in late.get_column("own").to_list()
    ]
    return pl.concat(
        [
            placements,
            moved.select("tournament_id", pl.col("recorded").alias("placed")),
            late.select("tournament_id").with_columns(pl.Series("placed", placed, pl.String)),
        ]
    )


def place_fide_games(
    games: pl.DataFrame, placements: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """`games` with each placed tournament's games moved to its period, and apart the games of
    the tournaments too late to be rated (`late_fide_placements`)."""
    if not placements.height:
        return games, games.clear()
    joined = games.join(placements, on="tournament_id", how="left")
    ids = placements.get_column("tournament_id").implode()
    dropped = pl.col("tournament_id").is_in(ids).fill_null(False) & pl.col("placed").is_null()
    too_late = joined.filter(dropped)
    rated = joined.filter(~dropped).with_columns(pl.coalesce("placed", "period").alias("period"))
    return rated.drop("placed").select(games.columns), too_late.select(games.columns)


def too_late_quarantine(too_late: pl.DataFrame) -> pl.DataFrame:
    """Quarantine rows (source_file, line, record, value, reason) of the games of tournaments
    too late to be rated: one per game, the reason naming the tournament, its period and the
    rule (`TOO_LATE`)."""
    return too_late.select(
        pl.col("source_file").cast(pl.String),
        pl.col("source_line").cast(pl.Int64).alias("line"),
        pl.col("game_id").cast(pl.String).alias("record"),
        pl.col("tournament_id").cast(pl.String).alias("value"),
        format_text(
            f"tournament {{}} of {{}}: {TOO_LATE}",
            "tournament_id",
            "period",
        ).alias("reason"),
    ).sort("source_file", "line")


def late_fide_choices(
    games: pl.DataFrame, recorded: pl.DataFrame, published: Collection[str], chosen: Policy
) -> list[str]:
    """One line per late FIDE tournament of `games` (FIDE list periods) saying what each policy
    does with it (`ratings preview`), the `chosen` one marked: `late-may of 2026-05:
    next_list (in force) → the list of 2026-07; revise → revises 2026-05 to 2026-06`. Late:
    not yet rated (`recorded`) and its own period published."""
    if not games.height or not published:
        return []
    late = late_fide_placements(games, recorded, published, NEXT_LIST)
    own = dict(games.group_by("tournament_id").agg(pl.col("period").max()).drop_nulls().iter_rows())
    rated = set(recorded.get_column("tournament_id").to_list())
    lines = []
    for tournament, placed in sorted(late.iter_rows(), key=lambda row: str(row[0])):
        if tournament in rated:
            continue
        period = own[tournament]
        later = sorted(p for p in published if p >= period)
        span = later[0] if len(later) == 1 else f"{later[0]} to {later[-1]}"
        goes = f"the list of {placed}" if placed else "not rated, too late (FIDE §9.1)"
        marks = {p: " (in force)" if p == chosen else "" for p in POLICIES}
        lines.append(
            f"late FIDE tournament {tournament} of {period}: next_list{marks[NEXT_LIST]} → "
            f"{goes}; revise{marks[REVISE]} → revises {span}"
        )
    return lines
