"""Federation assets: FIDE (RULES §3), UKD (§4) and club (§6) lists, a range of periods per step.

Each `*_ratings` asset starts its range from the state after the period before it (its own
previous partition, read from the lake); within the range `rating_core` carries the state from
period to period, an official starting list after P-1 replacing it, so a late result in an old
month is a backfill from that month on. Built by `assets.systems.system_assets`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

import dagster as dg
import polars as pl

from assets.systems import (
    CheckInput,
    PeriodCheck,
    Publishing,
    RangeInputs,
    SystemSpec,
    games_from,
    read_states,
    system_assets,
)
from rating_core import tables
from rating_core.budget import MemoryBudget
from rating_core.lake.storage import (
    read_period_range,
    read_table,
    table_partitions,
    write_partitioned,
)
from rating_core.periods import period_range, previous_period
from rating_core.schemas import APPLIED_INPUTS_SCHEMA, GAMES_SCHEMA, RATING_LISTS, empty
from rating_core.systems.contract import LIST_COLUMN
from rating_core.systems.corrections import (
    CORRECTION_LOG_SCHEMA,
    applied_birth_years,
    correction_causes,
    correction_quarantine,
    correction_summary,
    system_corrections,
)
from rating_core.systems.federation import (
    CLUB_STATE,
    club_lists_periods,
    corrections_table,
    federation_state_tables,
    fide_lists_periods,
    ukd_lists_periods,
)
from rating_core.systems.fide.rules import rules_for_period
from rating_core.systems.input_causes import (
    TOURNAMENT,
    carried_causes,
    club_period_inputs,
    correction_inputs,
    input_causes,
    joined_causes,
    new_corrections,
    period_inputs,
)
from rating_core.systems.late_results import (
    DEFAULT_POLICY,
    LATEST_LIST,
    NEXT_LIST,
    LateResultsPolicy,
    fide_list_periods,
    late_fide_placements,
    place_fide_games,
    too_late_quarantine,
)
from rating_core.systems.merges import (
    APPLIED_SCHEMA,
    apply_merges,
    merge_causes,
    merge_reason,
    merges_in_force,
)
from rating_core.systems.ukd.rules import UKD_RULES
from rating_core.tables import applied_merges


def _games(lake: Path, periods: list[str], source: str) -> pl.DataFrame:
    """The range's games from one kind of source (`federation` or `club`), filtered in the scan:
    a platform's month beside them in the same periods is never read into memory."""
    games = read_table(lake, tables.GAMES, periods, schema=GAMES_SCHEMA)
    return games.filter(pl.col("source") == source).collect()


def _fide_games(
    lake: Path, periods: list[str], policy: LateResultsPolicy = DEFAULT_POLICY
) -> pl.DataFrame:
    """The federation games of the range's FIDE lists, by FIDE's closing date (RULES §3.4): a
    tournament ending on one of the last two days of the month before the range, or of a
    period of it, goes on the next period's list (`fide_list_periods`). Under `next_list`, a
    late tournament goes on the first unpublished period's list, or on none past the third
    list (`_fide_placed`): the games of the periods up to the third list before the range are
    read for it."""
    if not periods:
        return _games(lake, periods, "federation")
    back = LATEST_LIST if policy.fide == NEXT_LIST else 1
    read = [*period_range(_periods_before(periods[0], back), periods[0]), *periods[1:]]
    games, _ = _fide_placed(lake, fide_list_periods(_games(lake, read, "federation")), policy)
    return games.filter(pl.col("period").is_in(periods)).sort("period", maintain_order=True)


def _periods_before(period: str, count: int) -> str:
    """The period `count` periods before `period`."""
    for _ in range(count):
        period = previous_period(period)
    return period


def _fide_placed(
    lake: Path, games: pl.DataFrame, policy: LateResultsPolicy
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """`games` (FIDE list periods) with the late tournaments placed by the FIDE policy, and
    apart the games too late to be rated (RULES §3.4): the published periods and the
    tournaments they rated are those recorded in `applied/fide-inputs` when the run starts
    (the publishing step records them only after it has published)."""
    if policy.fide != NEXT_LIST or not games.height:
        return games, games.clear()
    table = tables.applied_inputs("fide")
    published = set(table_partitions(lake, table))
    if not published:
        return games, games.clear()
    recorded = (
        read_table(lake, table)
        .filter(pl.col("source") == TOURNAMENT)
        .select(pl.col("name").alias("tournament_id"), "period")
        .unique()
        .collect()
    )
    placements = late_fide_placements(games, recorded, published, policy.fide)
    return place_fide_games(games, placements)


def _system_games(
    system: str, policy: LateResultsPolicy = DEFAULT_POLICY
) -> Callable[[Path, list[str], str], pl.DataFrame]:
    """How `system` reads its games of a range: FIDE by closing date and late-results policy,
    the others as they are."""
    if system == "fide":
        return lambda lake, periods, source: _fide_games(lake, periods, policy)
    return _games


def _quarantine_too_late(policy: LateResultsPolicy) -> Callable[[Path], None]:
    """Replace the quarantine's `source=fide-late-results` with the games of the FIDE
    tournaments too late to be rated under `next_list` (RULES §3.4, FIDE §9.1), over every
    federation game (empty under `revise`)."""

    def after(lake: Path) -> None:
        games = pl.DataFrame(schema=GAMES_SCHEMA)
        if policy.fide == NEXT_LIST:  # the federation games only, not the platform's
            scan = read_table(lake, tables.GAMES, schema=GAMES_SCHEMA)
            games = scan.filter(pl.col("source") == "federation").collect()
        _, too_late = _fide_placed(lake, fide_list_periods(games), policy)
        rows = too_late_quarantine(too_late).with_columns(source=pl.lit(TOO_LATE_SOURCE))
        write_partitioned(lake, tables.QUARANTINE, rows, partitions=[TOO_LATE_SOURCE])

    return after


TOO_LATE_SOURCE = "fide-late-results"
"""The quarantine partition of the FIDE tournaments too late to be rated."""


def _registry(lake: Path) -> pl.DataFrame | None:
    registry = read_table(lake, tables.PLAYERS).collect()
    return registry if registry.height else None


def _tournament_players(lake: Path) -> pl.DataFrame | None:
    """The TRF files' player records (written with the starting lists), None when none."""
    frame = read_table(lake, tables.TOURNAMENT_PLAYERS).collect()
    return frame if frame.height else None


def _correction_logs(lake: Path, system: str) -> pl.DataFrame:
    """Every period's log of the system's corrections (`history/<system>-corrections`)."""
    logs = read_table(lake, corrections_table(system)).collect()
    return logs if logs.columns else empty({**CORRECTION_LOG_SCHEMA, "period": pl.String})


def _merges(lake: Path) -> pl.DataFrame | None:
    """The duplicate-player merges in force (`federation/merges.csv`), None when there are none."""
    merges = read_table(lake, tables.MERGES).collect()
    return merges if merges.height else None


def _load_federation(system: str, policy: LateResultsPolicy = DEFAULT_POLICY):
    def load(lake: Path, periods: list[str], budget: MemoryBudget) -> RangeInputs:
        corrections = system_corrections(read_table(lake, tables.CORRECTIONS).collect(), system)
        before = _correction_logs(lake, system).filter(pl.col("period") < periods[0])
        games, starting_lists = apply_merges(
            _system_games(system, policy)(lake, periods, "federation"),
            read_table(lake, tables.STARTING_LISTS).collect(),
            _merges(lake),
        )
        return {
            "games": games,
            "starting_lists": starting_lists,
            "players": _registry(lake),  # UKD: only the lists' player data
            "tournaments": _tournament_players(lake),
            "states": read_states(lake, federation_state_tables(system), periods[0]),
            "corrections": corrections,
            # the birth dates corrected before the range still hold in it
            "birth_years": applied_birth_years(before.sort("period", "source_line")),
        }

    return load


def _quarantine_corrections(system: str):
    """Replace the quarantine's `source=corrections-<system>` with the system's corrections that
    did not apply, over every period rated so far (a player not on the list, a period not
    computed...): ingest cannot tell, only the rated period can."""

    def after(lake: Path) -> None:
        corrections = system_corrections(read_table(lake, tables.CORRECTIONS).collect(), system)
        source = f"corrections-{system}"
        rows = correction_quarantine(corrections, _correction_logs(lake, system))
        tagged = rows.with_columns(source=pl.lit(source))
        write_partitioned(lake, tables.QUARANTINE, tagged, partitions=[source])

    return after


def _correction_logs_of(lake: Path, system: str, periods: list[str]) -> dict[str, pl.DataFrame]:
    """Each period's log of the system's corrections (`history/<system>-corrections`)."""
    schema = {**CORRECTION_LOG_SCHEMA, "period": pl.String}
    return read_period_range(lake, corrections_table(system), periods, schema)


def _federation_publishing(system: str, reason: str, policy: LateResultsPolicy = DEFAULT_POLICY):
    """The merges' publishing (`_publishing`) with the rating officer's corrections: each
    period's reason also names the corrections applied to it since its last publication (a
    revision never repeats one its parent applied), and a player such a correction moved has
    it as the diff's cause (`correction: rating 1812 -> 1830 (<the officer's reason>)`), beside
    a merge's cause when both moved them; and with the inputs' causes (`_with_input_causes`),
    whose record also keeps the corrections applied."""
    merged = _publishing(system, reason)
    inputs_table = tables.applied_inputs(system)

    def publishing(lake: Path, periods: list[str]) -> Publishing:
        base = merged(lake, periods)
        logs = _correction_logs_of(lake, system, periods)
        recorded = set(table_partitions(lake, inputs_table))
        record = read_period_range(lake, inputs_table.name, periods, APPLIED_INPUTS_SCHEMA)
        new_logs = {
            period: new_corrections(logs[period], record[period] if period in recorded else None)
            for period in periods
        }

        def period_reason(period: str) -> str:
            applied = correction_summary(new_logs[period])
            text = base.reason(period)
            return f"{text}; {applied}" if applied else text

        def causes(period: str) -> pl.DataFrame | None:
            return joined_causes([base.causes(period), correction_causes(new_logs[period])])

        return Publishing(reason=period_reason, causes=causes, after=base.after)

    def corrections_applied(lake: Path, periods: list[str]) -> dict[str, pl.DataFrame]:
        logs = _correction_logs_of(lake, system, periods)
        return {period: correction_inputs(logs[period]) for period in periods}

    return _with_input_causes(
        publishing,
        system,
        "federation",
        period_inputs,
        extra_inputs=corrections_applied,
        policy=policy,
    )


def _with_input_causes(
    inner: Callable[[Path, list[str]], Publishing],
    system: str,
    source: str,
    inputs_of: Callable[[pl.DataFrame, pl.DataFrame, str, str], pl.DataFrame],
    extra_inputs: Callable[[Path, list[str]], Mapping[str, pl.DataFrame]] | None = None,
    policy: LateResultsPolicy = DEFAULT_POLICY,
) -> Callable[[Path, list[str]], Publishing]:
    """`inner`'s publishing, where a player moved by a tournament or a starting-list entry new,
    changed or gone since the last publication also has that as the diff's cause (`late result:
    tournament T (standard)`, `rating_core.systems.input_causes`), and a player moved only by
    an earlier period of the same publication has where it came from (`carried from 2026-03:
    late result: tournament T (standard)`, `carried_causes`), never the version's reason; the
    inputs published are recorded in `applied/<system>-inputs` afterwards, for the next
    publication's causes, with `extra_inputs`' rows (the corrections applied). `inputs_of`
    gives a period's inputs from its games (`source`) and the starting lists; `policy` places
    FIDE's late tournaments as the ratings step did."""
    inputs_table = tables.applied_inputs(system)
    games_of = _system_games(system, policy)

    def publishing(lake: Path, periods: list[str]) -> Publishing:
        base = inner(lake, periods)
        games = games_of(lake, periods, source)
        starting_lists = read_table(lake, tables.STARTING_LISTS).collect()
        current = {
            period: inputs_of(
                games.filter(pl.col("period") == period), starting_lists, system, period
            )
            for period in periods
        }
        extra = extra_inputs(lake, periods) if extra_inputs is not None else {}
        recorded = set(table_partitions(lake, inputs_table))
        inputs_before = read_period_range(lake, inputs_table.name, periods, APPLIED_INPUTS_SCHEMA)
        own: dict[str, pl.DataFrame | None] = {}

        def own_causes(period: str) -> pl.DataFrame | None:
            if period not in own:
                before = inputs_before[period] if period in recorded else None
                own[period] = joined_causes(
                    [base.causes(period), input_causes(current[period], before, system)]
                )
            return own[period]

        def causes(period: str) -> pl.DataFrame | None:
            earlier = [(p, own_causes(p)) for p in periods if p < period]
            return joined_causes([own_causes(period), carried_causes(earlier)])

        def after(done: list[str]) -> None:
            base.after(done)
            frames = [
                pl.concat([current[p], *([extra[p]] if p in extra else [])]).with_columns(
                    period=pl.lit(p)
                )
                for p in done
            ]
            write_partitioned(lake, inputs_table, pl.concat(frames), partitions=done)

        return Publishing(reason=base.reason, causes=causes, after=after)

    return publishing


def _load_club(lake: Path, periods: list[str], budget: MemoryBudget) -> RangeInputs:
    games, _ = apply_merges(_games(lake, periods, "club"), None, _merges(lake))
    return {
        "games": games,
        "players": _registry(lake),
        "starting_lists": read_table(lake, tables.STARTING_LISTS).collect(),
        "tournaments": _tournament_players(lake),
        "states": read_states(lake, [CLUB_STATE], periods[0]),
    }


def _rows(check: CheckInput) -> pl.DataFrame:
    return check.output.list_rows


def _by_list_kind(rows: pl.DataFrame) -> list[tuple[str, pl.DataFrame]]:
    """The rows of each FIDE list (`fide-standard`...) with its kind (`standard`...): each list
    has its own rules (RULES §3.3)."""
    if LIST_COLUMN not in rows.columns:
        return [("standard", rows)]
    return [
        (str(name).removeprefix("fide-"), part)
        for (name,), part in rows.group_by(LIST_COLUMN, maintain_order=True)
    ]


def fide_bad_k(check: CheckInput) -> int:
    """Rows whose K is not one the period's rules of their list allow (10, 20, 40 or a K x n
    cap since 2014-07; 10, 15, 30 before; 20 for everyone on rapid and blitz until 2022-09)
    or, where the era caps it, K x n > 700."""
    rows = _rows(check)
    if not rows.height:
        return 0
    bad = 0
    for kind, part in _by_list_kind(rows):
        rules = rules_for_period(check.period, kind)
        played = part.filter(pl.col("games") > 0)
        allowed = pl.col("k").is_in(list(rules.k_values))
        if rules.k_times_n_max is None:
            bad += played.filter(~allowed).height
            continue
        allowed = allowed | (pl.col("k") == rules.k_times_n_max // pl.col("games"))
        over = pl.col("k") * pl.col("games") > rules.k_times_n_max
        bad += played.filter(~allowed | over).height
    return bad


def fide_below_floor(check: CheckInput) -> int:
    """Rows rated below the floor of the period's rules (1000 until 2024-02, 1400 from 2024-03)."""
    rows = _rows(check)
    if not rows.height:
        return 0
    return sum(
        part.filter(pl.col("rating") < rules_for_period(check.period, kind).floor).height
        for kind, part in _by_list_kind(rows)
    )


def fide_one_sided_games(check: CheckInput) -> int:
    """Games between two rated players counted for one side only.

    A game counted for one side only must be explained by a per-side rule (none for two rated
    players in the same list), so every such game has 0 or 2 counted sides.
    """
    missing = 0
    for kind in RATING_LISTS:
        expl = check.output.explanations.get(
            tables.history(f"fide-{kind}", "game_explanations").name
        )
        if expl is None or not expl.height:
            continue
        both = expl.filter(pl.col("opponent_rating").is_not_null())
        sides = both.group_by("game_id").agg(pl.col("counted").sum().alias("n"))
        missing += sides.filter(pl.col("n") == 1).height
    return missing


def ukd_below_floor(check: CheckInput) -> int:
    """Rows rated below the UKD floor (1000)."""
    rows = _rows(check)
    return rows.filter(pl.col("rating") < UKD_RULES.floor).height if rows.height else 0


def _publishing(system: str, reason: str):
    """Each version names the merges new since the last publication of its period as the cause
    of the players they moved, and records the merges it applied."""

    def publishing(lake: Path, periods: list[str]) -> Publishing:
        merges = _merges(lake)
        table = applied_merges(system)
        applied = read_period_range(lake, table.name, periods, APPLIED_SCHEMA)

        def after(periods: list[str]) -> None:
            frames = [
                merges_in_force(merges, period)
                .select("keep_id", "merge_id")
                .with_columns(pl.lit(period).alias("period"))
                for period in periods
            ]
            if merges is None and not any(applied[p].height for p in periods):
                return  # no merge now nor at the last publication: nothing to record
            write_partitioned(lake, table, pl.concat(frames), partitions=periods)

        return Publishing(
            reason=lambda period: merge_reason(reason, merges, period, applied[period]),
            causes=lambda period: merge_causes(merges, period, applied[period]),
            after=after,
        )

    return publishing


def _started_from(facts: dict) -> dict:
    return {
        "started_from": dg.MetadataValue.json(
            {period: own.get("started_from") for period, own in facts.items()}
        )
    }


def _federation_inputs(lake: Path) -> bool:
    """Federation games, or a starting list (a list is republished from it alone)."""
    lists = read_table(lake, tables.STARTING_LISTS).select(pl.len()).collect().item()
    return lists > 0 or games_from("federation")(lake)


def _fide_metadata(facts: dict) -> dict:
    """Where each period started from, and the rules (era) each period was rated by."""
    return {
        **_started_from(facts),
        "rules": dg.MetadataValue.json({period: own.get("rules") for period, own in facts.items()}),
    }


def _fide_spec(policy: LateResultsPolicy) -> SystemSpec:
    """The FIDE system under a late-results policy (RULES §3.4): its games placed by it in the
    ratings step, the publishing step and the quarantine of the tournaments too late."""
    return replace(
        FIDE,
        load=_load_federation("fide", policy),
        publishing=_federation_publishing(
            "fide", "rated from the period's federation games", policy
        ),
        after_rating=_after_fide_rating(policy),
    )


def _after_fide_rating(policy: LateResultsPolicy) -> Callable[[Path], None]:
    """The corrections that did not apply, then the tournaments too late, to the quarantine."""
    corrections, too_late = _quarantine_corrections("fide"), _quarantine_too_late(policy)

    def after(lake: Path) -> None:
        corrections(lake)
        too_late(lake)

    return after


FIDE = SystemSpec(
    name="fide",
    description="FIDE standard, rapid and blitz ratings after the period, with explanations.",
    deps=["games", "starting_lists", "players", "corrections", "merges"],
    state_tables=federation_state_tables("fide"),
    load=_load_federation("fide"),
    rate=lambda i, periods, sink: fide_lists_periods(
        i["games"],
        i["starting_lists"],
        i["states"],
        i["players"],
        periods,
        i["corrections"],
        i["birth_years"],
        i["tournaments"],
    ),
    publishing=_federation_publishing("fide", "rated from the period's federation games"),
    checks=[
        PeriodCheck(
            "fide_k_allowed",
            "K is one the period's rules allow (10, 20, 40 or a K x n cap) and K x n <= 700.",
            "bad_k",
            fide_bad_k,
        ),
        PeriodCheck(
            "fide_floor_respected",
            "No FIDE rating below the floor of the period's rules (1400; 1000 before 2024-03).",
            "below_floor",
            fide_below_floor,
        ),
        PeriodCheck(
            "fide_games_counted_both_sides",
            "Every rated game between two rated players is counted for both sides.",
            "one_sided_games",
            fide_one_sided_games,
        ),
    ],
    metadata=_fide_metadata,
    has_inputs=_federation_inputs,
    after_rating=_after_fide_rating(DEFAULT_POLICY),
    for_policy=lambda policy: _fide_spec(policy),
)
UKD = SystemSpec(
    name="ukd",
    description="UKD standard, rapid and blitz ratings after the period, with explanations.",
    deps=["games", "starting_lists", "players", "corrections", "merges"],
    state_tables=federation_state_tables("ukd"),
    load=_load_federation("ukd"),
    rate=lambda i, periods, sink: ukd_lists_periods(
        i["games"],
        i["starting_lists"],
        i["states"],
        periods,
        i["corrections"],
        i["players"],
        i["tournaments"],
    ),
    publishing=_federation_publishing("ukd", "rated from the period's federation games"),
    checks=[
        PeriodCheck("ukd_floor_respected", "No UKD below 1000.", "below_1000", ukd_below_floor)
    ],
    metadata=_started_from,
    has_inputs=_federation_inputs,
    after_rating=_quarantine_corrections("ukd"),
)
CLUB = SystemSpec(
    name="club",
    description="Club ratings per club and list after the period's closed tournaments.",
    deps=["games", "players", "starting_lists", "merges"],
    state_tables=[CLUB_STATE],
    load=_load_club,
    rate=lambda i, periods, sink: club_lists_periods(
        i["games"],
        i["states"][CLUB_STATE],
        i["players"],
        periods,
        i["starting_lists"],
        i["tournaments"],
    ),
    publishing=_with_input_causes(
        _publishing("club", "rated from the period's closed club tournaments"),
        "club",
        "club",
        club_period_inputs,
    ),
    has_inputs=games_from("club"),
)

fide_ratings, fide_lists_published = system_assets(FIDE)
ukd_ratings, ukd_lists_published = system_assets(UKD)
club_ratings, club_lists_published = system_assets(CLUB)

FEDERATION_SPECS = [FIDE, UKD, CLUB]
FEDERATION_ASSETS = [
    fide_ratings,
    ukd_ratings,
    club_ratings,
    fide_lists_published,
    ukd_lists_published,
    club_lists_published,
]
