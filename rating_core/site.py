"""Site ratings (RULES §2): per-category ratings and the weighted site Elo, replayed game by game.

Which games are rated is decided in Polars; the sequential replay is one numba kernel over
integer-coded arrays. The state (rating and game count per player per number) is all the
replay needs, so a period can be replayed from the previous period's state or all at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import polars as pl
from numba import njit

from rating_core.codes import dense_codes, sort_permutation
from rating_core.elo import elo_update, expected_score, score_of
from rating_core.rounding import round_half_away, round_half_away_expr
from rating_core.schemas import CATEGORIES, PLAYERS_SCHEMA, empty
from rating_core.timecontrol import TIME_CONTROL_RULES

SITE_ELO = "site-elo"
SITE_NUMBERS: list[str] = [SITE_ELO] + [f"site-{c}" for c in CATEGORIES]
"""Every number a human carries: index 0 is the site Elo, index 1 + i the category CATEGORIES[i]."""


@dataclass(frozen=True)
class SiteRules:
    """Every constant of the site rating system (RULES §1 weights, §2), kept in one place."""

    start: float = 1500.0
    floor: float = 100.0
    k_new: float = 32.0
    k_established: float = 20.0
    k_threshold: int = 30  # K is k_new while fewer than this many rated games before the game
    provisional_below: int = 10
    min_plies: int = 2  # fewer plies: aborted before both sides moved
    bot_no_move_min_plies: int = 18  # move 10 and later: a missing bot move is a human loss
    weights: tuple[tuple[str, float], ...] = TIME_CONTROL_RULES.weights  # RULES §1 table

    def weight(self, category: str) -> float:
        """The category's weight in the site Elo (RULES §1 table)."""
        return dict(self.weights)[category]

    def k(self, games_before: int) -> float:
        """K for a number with `games_before` rated games before this game."""
        return self.k_new if games_before < self.k_threshold else self.k_established


SITE_RULES = SiteRules()

SITE_STATE_SCHEMA: dict[str, pl.DataType] = {
    "player_id": pl.String,
    "number": pl.String,  # one of SITE_NUMBERS
    "rating": pl.Float64,  # unrounded
    "games": pl.Int64,  # rated games in this number so far (career)
    "last_period": pl.String,  # period of the last rated game in this number
}

SITE_HISTORY_SCHEMA: dict[str, pl.DataType] = {
    "game_id": pl.String,
    "played_at": pl.Datetime("us", "UTC"),
    "period": pl.String,
    "player_id": pl.String,
    "number": pl.String,
    "opponent_id": pl.String,
    "opponent_is_bot": pl.Boolean,
    "rating_before": pl.Float64,
    "opponent_rating": pl.Float64,
    "expected": pl.Float64,
    "k": pl.Float64,
    "weight": pl.Float64,
    "score": pl.Float64,
    "raw_change": pl.Float64,  # K x weight x (S - E), before the floor
    "change": pl.Float64,  # applied: rating_after - rating_before
    "rating_after": pl.Float64,
    "games_before": pl.Int64,
}

SITE_EXCLUDED_SCHEMA: dict[str, pl.DataType] = {
    "game_id": pl.String,
    "period": pl.String,
    "reason": pl.String,
}

SITE_REJECTED_SCHEMA: dict[str, pl.DataType] = {
    "game_id": pl.String,
    "period": pl.String,
    "source_file": pl.String,
    "source_line": pl.Int64,
    "value": pl.String,
    "reason": pl.String,
}

SITE_LIST_SCHEMA: dict[str, pl.DataType] = {
    "list": pl.String,
    "period": pl.String,
    "player_id": pl.String,
    "rating": pl.Int64,
    "rating_exact": pl.Float64,
    "games": pl.Int64,
    "total_games": pl.Int64,
    "provisional": pl.Boolean,
    "display": pl.String,
    "change": pl.Float64,
}

# Reasons, spelled once (tests and the run summary match on them).
R_MODERATION = "annulled by moderation"
R_CASUAL = "casual game"
R_ABORTED = "aborted"
R_STATUS_ANNULLED = "annulled"
R_FORFEIT = "forfeit, not rated"
R_BYE = "bye, not rated"
R_ABORT_TERMINATION = "aborted (termination abort)"
R_FEW_PLIES = "aborted before both sides moved (fewer than 2 plies)"
R_OTB = "over-the-board game not confirmed by both players"
R_BOTH_BOTS = "both sides are bots"
R_BOT_NO_MOVE = "bot move missing before move 10: annulled"
REJ_BOT_LOST = "contradictory record: a bot never loses on time or by abandonment"
REJ_NO_BOT = "termination bot_no_move in a game without a bot"
REJ_NO_PLIES = "termination bot_no_move without a ply count"
REJ_BOT_RATING = "bot without a fixed rating (no bot_rating in the registry, no Elo tag)"
REJ_NO_RESULT = "rated game without a result"
REJ_NO_CATEGORY = "rated game without a site category"
REJ_SELF = "a player cannot play themselves"
REJ_MISSING = "missing player id, time or period"


@dataclass(frozen=True)
class SiteReplayResult:
    """What a site replay produces: per-game history, end state, excluded and rejected games."""

    history: pl.DataFrame  # SITE_HISTORY_SCHEMA, one row per human per game per number
    state: pl.DataFrame  # SITE_STATE_SCHEMA, the starting state of the next replay
    excluded: pl.DataFrame  # SITE_EXCLUDED_SCHEMA, games not rated, with the reason
    rejected: pl.DataFrame  # SITE_REJECTED_SCHEMA, contradictory records for the quarantine
    rated_games: int = 0
    notes: tuple[str, ...] = field(default=())


def empty_site_state() -> pl.DataFrame:
    """The state before any game: nobody has a number yet."""
    return empty(SITE_STATE_SCHEMA)


# --- which games are rated (vectorized) ------------------------------------------------------

EXCLUDE_REASONS = [
    R_MODERATION,
    R_CASUAL,
    R_ABORTED,
    R_STATUS_ANNULLED,
    R_FORFEIT,
    R_BYE,
    R_ABORT_TERMINATION,
    R_FEW_PLIES,
    R_OTB,
    R_BOTH_BOTS,
    R_BOT_NO_MOVE,
]
REJECT_REASONS = [
    REJ_BOT_LOST,
    REJ_MISSING,
    REJ_SELF,
    REJ_NO_BOT,
    REJ_NO_PLIES,
    REJ_BOT_RATING,
    REJ_NO_RESULT,
    REJ_NO_CATEGORY,
]
_BOTS_CODE = CATEGORIES.index("bots")


def _col_or(frame: pl.DataFrame, name: str, dtype: pl.DataType) -> pl.Expr:
    """A column of `frame`, or a null column of `dtype` when the frame lacks it."""
    return pl.col(name) if name in frame.columns else pl.lit(None, dtype=dtype).alias(name)


def _reason_code(branches: list[tuple[pl.Expr, str]], reasons: list[str]) -> pl.Expr:
    """The first matching branch as a UInt8 code (1 + index in `reasons`), 0 when none matches."""
    expr: pl.Expr | None = None
    for cond, reason in reversed(branches):
        code = pl.lit(reasons.index(reason) + 1, dtype=pl.UInt8)
        tail = expr if expr is not None else pl.lit(0, dtype=pl.UInt8)
        expr = pl.when(cond).then(code).otherwise(tail)
    assert expr is not None
    return expr


def _reason_text(code: str, reasons: list[str]) -> pl.Expr:
    return pl.col(code).replace_strict(
        list(range(1, len(reasons) + 1)), reasons, return_dtype=pl.String
    )


@dataclass(frozen=True)
class _Classified:
    """Every platform game with its exclusion/rejection codes, bot fields and player codes."""

    frame: pl.DataFrame  # the input columns plus _exclude/_reject (UInt8, 0 none) and bot fields
    ids: pl.Series  # sorted distinct player ids (games, `extra_ids`, registry bots)
    w_code: np.ndarray  # int32 code of white_id in `ids` per game (-1: null)
    b_code: np.ndarray
    extra_codes: np.ndarray  # codes of `extra_ids`
    rated: np.ndarray  # row numbers (into `frame`) of the rated games in replay order

    def rated_frame(self) -> pl.DataFrame:
        """The rated games in replay order with the columns `classify_site_games` documents."""
        return self.frame.select(
            "game_id",
            "played_at",
            "period",
            "white_id",
            "black_id",
            pl.col("_score").alias("white_score"),
            pl.col("_cat")
            .replace_strict(
                list(range(len(CATEGORIES))), CATEGORIES, return_dtype=pl.Enum(CATEGORIES)
            )
            .alias("category"),
            "w_bot",
            "b_bot",
            pl.col("w_bot_rating").fill_null(0.0),
            pl.col("b_bot_rating").fill_null(0.0),
        )[self.rated]


def _classify(
    games: pl.DataFrame,
    players: pl.DataFrame | None,
    annulled: Iterable[str] | pl.Series | None,
    rules: SiteRules,
    extra_ids: pl.Series | None = None,
) -> _Classified:
    """Decide, per platform game, whether it is rated, excluded (why) or rejected (why).

    Player ids are coded once (`dense_codes` over white, black, `extra_ids` and the registry's
    bots); the registry is looked up by code with numpy, not joined per game.
    """
    cols = [
        "game_id",
        "played_at",
        "period",
        "white_id",
        "black_id",
        "white_score",
        "category",
    ]
    g = games.select(
        *cols,
        _col_or(games, "rated", pl.Boolean),
        _col_or(games, "status", pl.String),
        _col_or(games, "plies", pl.Int32),
        _col_or(games, "termination", pl.String),
        _col_or(games, "kind", pl.String),
        _col_or(games, "otb_confirmed", pl.Boolean),
        _col_or(games, "white_is_bot", pl.Boolean),
        _col_or(games, "black_is_bot", pl.Boolean),
        _col_or(games, "white_elo", pl.Int32),
        _col_or(games, "black_elo", pl.Int32),
        _col_or(games, "source_file", pl.String),
        _col_or(games, "source_line", pl.Int64),
        _col_or(games, "source", pl.String),
    )
    source = pl.col("source")
    if not g.select((source.is_null() | (source == "platform")).all()).item():
        g = g.filter(source.is_null() | (source == "platform"))
    g = g.drop("source")
    n = g.height

    players = players if players is not None else empty(PLAYERS_SCHEMA)
    reg = (
        players.select(
            pl.col("player_id").cast(pl.String),
            pl.col("is_bot").cast(pl.Boolean).fill_null(False).alias("_bot"),
            pl.col("bot_rating").cast(pl.Float64).alias("_bot_rating"),
        )
        .unique("player_id", keep="first", maintain_order=True)
        .filter(pl.col("_bot") | pl.col("_bot_rating").is_not_null())
        .drop_nulls("player_id")
    )
    extra = extra_ids if extra_ids is not None else pl.Series(dtype=pl.String)
    n_extra, n_reg = extra.len(), reg.height
    codes, ids = dense_codes(
        pl.concat(
            [
                extra.cast(pl.String),
                reg["player_id"],
                g["white_id"].cast(pl.String),
                g["black_id"].cast(pl.String),
            ]
        )
    )
    extra_codes = codes[:n_extra]
    reg_codes = codes[n_extra : n_extra + n_reg]
    w_code = codes[n_extra + n_reg : n_extra + n_reg + n]
    b_code = codes[n_extra + n_reg + n :]
    # One padding slot at the end: code -1 (a null id) reads "not a bot, no rating".
    reg_bot = np.zeros(ids.len() + 1, dtype=np.bool_)
    reg_rating = np.full(ids.len() + 1, np.nan)
    reg_bot[reg_codes] = reg["_bot"].to_numpy()
    reg_rating[reg_codes] = reg["_bot_rating"].to_numpy()

    g = g.with_columns(
        (pl.col("white_is_bot").fill_null(False) | pl.Series(reg_bot[w_code])).alias("w_bot"),
        (pl.col("black_is_bot").fill_null(False) | pl.Series(reg_bot[b_code])).alias("b_bot"),
        pl.coalesce(
            pl.Series(reg_rating[w_code], nan_to_null=True), pl.col("white_elo").cast(pl.Float64)
        ).alias("w_bot_rating"),
        pl.coalesce(
            pl.Series(reg_rating[b_code], nan_to_null=True), pl.col("black_elo").cast(pl.Float64)
        ).alias("b_bot_rating"),
    )

    w_bot, b_bot = pl.col("w_bot"), pl.col("b_bot")
    any_bot = w_bot | b_bot
    human_bot = w_bot ^ b_bot
    term = pl.col("termination")
    bot_no_move = term == "bot_no_move"
    plies = pl.col("plies")
    status = pl.col("status")
    lost_by_bot = (w_bot & (pl.col("white_score") == 0.0)) | (
        b_bot & (pl.col("white_score") == 1.0)
    )
    annulled_ids = pl.Series(
        "game_id", list(annulled) if annulled is not None else [], dtype=pl.String
    )
    moderated = (
        pl.col("game_id").is_in(annulled_ids.implode()) if annulled_ids.len() else pl.lit(False)
    )
    exclude = _reason_code(
        [
            (moderated, R_MODERATION),
            (pl.col("rated").fill_null(True).not_(), R_CASUAL),
            (status == "aborted", R_ABORTED),
            (status == "annulled", R_STATUS_ANNULLED),
            (status == "forfeit", R_FORFEIT),
            (status == "bye", R_BYE),
            (term == "abort", R_ABORT_TERMINATION),
            (plies < rules.min_plies, R_FEW_PLIES),
            (
                ((pl.col("kind") == "otb") | (pl.col("category") == "otb"))
                & pl.col("otb_confirmed").fill_null(False).not_(),
                R_OTB,
            ),
            (w_bot & b_bot, R_BOTH_BOTS),
            (bot_no_move & human_bot & (plies < rules.bot_no_move_min_plies), R_BOT_NO_MOVE),
        ],
        EXCLUDE_REASONS,
    )
    missing = (
        pl.col("white_id").is_null()
        | pl.col("black_id").is_null()
        | pl.col("played_at").is_null()
        | pl.col("period").is_null()
    )
    reject = (
        pl.when(lost_by_bot & term.is_in(["timeout", "abandon"]))
        .then(pl.lit(REJECT_REASONS.index(REJ_BOT_LOST) + 1, dtype=pl.UInt8))
        .when(pl.col("_exclude") != 0)
        .then(pl.lit(0, dtype=pl.UInt8))
        .otherwise(
            _reason_code(
                [
                    (missing, REJ_MISSING),
                    (pl.col("white_id") == pl.col("black_id"), REJ_SELF),
                    (bot_no_move & any_bot.not_(), REJ_NO_BOT),
                    (bot_no_move & plies.is_null(), REJ_NO_PLIES),
                    (
                        (w_bot & pl.col("w_bot_rating").is_null())
                        | (b_bot & pl.col("b_bot_rating").is_null()),
                        REJ_BOT_RATING,
                    ),
                    (
                        pl.col("white_score").is_null() & (bot_no_move & human_bot).not_(),
                        REJ_NO_RESULT,
                    ),
                    (pl.col("category").is_null() & any_bot.not_(), REJ_NO_CATEGORY),
                ],
                REJECT_REASONS,
            )
        )
    )
    # From move 10 on, a missing bot move is a loss for the human whatever the record says.
    final_score = (
        pl.when(bot_no_move & human_bot)
        .then(pl.when(w_bot).then(1.0).otherwise(0.0))
        .otherwise(pl.col("white_score"))
    )
    g = g.with_columns(
        exclude.alias("_exclude"),
        final_score.alias("_score"),
        pl.when(any_bot)
        .then(pl.lit(_BOTS_CODE, dtype=pl.UInt8))
        .otherwise(pl.col("category").cast(pl.Enum(CATEGORIES)).to_physical().cast(pl.UInt8))
        .alias("_cat"),
    ).with_columns(reject.alias("_reject"))
    ok = (pl.col("_exclude") == 0) & (pl.col("_reject") == 0)
    rated = np.flatnonzero(g.select(ok.fill_null(False)).to_series().to_numpy())
    return _Classified(g, ids, w_code, b_code, extra_codes, _replay_order(g, rated))


def _replay_order(g: pl.DataFrame, rows: np.ndarray) -> np.ndarray:
    """`rows` sorted by (period, played_at, game_id)."""
    perm = sort_permutation(g.select("period", "played_at", "game_id")[rows])
    return rows if perm is None else rows[perm]


def classify_site_games(
    games: pl.DataFrame,
    players: pl.DataFrame | None = None,
    annulled: Iterable[str] | pl.Series | None = None,
    rules: SiteRules = SITE_RULES,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Split platform games into (rated, excluded, rejected) frames with Polars expressions.

    `rated` is sorted by (period, played_at, game_id) and carries the human-relative fields the
    kernel needs: final white score, effective category, bot flags and bot fixed ratings.
    """
    c = _classify(games, players, annulled, rules)
    return c.rated_frame(), _excluded(c), _rejected(c)


def _excluded(c: _Classified) -> pl.DataFrame:
    return c.frame.filter((pl.col("_reject") == 0) & (pl.col("_exclude") != 0)).select(
        "game_id", "period", _reason_text("_exclude", EXCLUDE_REASONS).alias("reason")
    )


def _rejected(c: _Classified) -> pl.DataFrame:
    return c.frame.filter(pl.col("_reject") != 0).select(
        "game_id",
        "period",
        "source_file",
        "source_line",
        pl.format(
            "white {} bot={} score={} termination={} plies={}",
            pl.col("white_id"),
            pl.col("w_bot"),
            pl.col("white_score"),
            pl.col("termination"),
            pl.col("plies"),
        ).alias("value"),
        _reason_text("_reject", REJECT_REASONS).alias("reason"),
    )


# --- the sequential replay (numba) -----------------------------------------------------------


@njit(cache=True)
def _site_kernel(
    rows: np.ndarray,
    w_idx: np.ndarray,
    b_idx: np.ndarray,
    w_score: np.ndarray,
    cat_num: np.ndarray,
    weights: np.ndarray,
    w_bot: np.ndarray,
    b_bot: np.ndarray,
    w_bot_r: np.ndarray,
    b_bot_r: np.ndarray,
    period: np.ndarray,
    ratings: np.ndarray,
    games: np.ndarray,
    last: np.ndarray,
    k_new: float,
    k_est: float,
    k_threshold: int,
    floor: float,
    record: bool,
    out: np.ndarray,
    out_games: np.ndarray,
) -> None:
    """Replay the games `rows` (row numbers, in replay order), updating `ratings`/`games`/`last`.

    The per-game arrays cover every game; only rows[r] are read. For the r-th rated game, side
    s (0 white, 1 black) and slot j (0 site Elo, 1 category) it writes, when `record`,
    out[r, s, j, :] = before, opponent, expected, k, raw change, change, after and
    out_games[r, s, j] = games before. Bot sides keep their fixed rating and are not written.
    cat_num[i] is the category index (column 1 + cat_num[i]), weights[cat_num[i]] its weight;
    period[r] is the code of the r-th rated game's period.
    """
    for r in range(rows.shape[0]):
        i = rows[r]
        wi = w_idx[i]
        bi = b_idx[i]
        wb = w_bot[i]
        bb = b_bot[i]
        c = cat_num[i]
        per = period[r]
        for j in range(2):
            col = 0 if j == 0 else 1 + c
            wt = weights[c] if j == 0 else 1.0
            rw = w_bot_r[i] if wb else ratings[wi, col]
            rb = b_bot_r[i] if bb else ratings[bi, col]
            for s in range(2):
                if s == 0:
                    if wb:
                        continue
                    p, me, opp, sc = wi, rw, rb, w_score[i]
                else:
                    if bb:
                        continue
                    p, me, opp, sc = bi, rb, rw, 1.0 - w_score[i]
                gb = games[p, col]
                k = k_new if gb < k_threshold else k_est
                e, raw, applied, after = elo_update(me, opp, sc, k, wt, floor)
                ratings[p, col] = after
                games[p, col] = gb + 1
                last[p, col] = per
                if record:
                    out[r, s, j, 0] = me
                    out[r, s, j, 1] = opp
                    out[r, s, j, 2] = e
                    out[r, s, j, 3] = k
                    out[r, s, j, 4] = raw
                    out[r, s, j, 5] = applied
                    out[r, s, j, 6] = after
                    out_games[r, s, j] = gb


def site_replay(
    games: pl.DataFrame,
    players: pl.DataFrame | None = None,
    annulled: Iterable[str] | pl.Series | None = None,
    state: pl.DataFrame | None = None,
    rules: SiteRules = SITE_RULES,
    history: bool = True,
) -> SiteReplayResult:
    """Replay platform games from `state` (previous period's end state, or empty at the start).

    Games are applied in (period, played_at, game_id) order; `history=False` skips the
    per-game rows (for very large replays where only the end state is wanted).
    """
    state = state if state is not None else empty_site_state()
    c = _classify(games, players, annulled, rules, extra_ids=state["player_id"])
    rows = c.rated
    n = rows.shape[0]
    g = c.frame

    # Rated games are in period order, so their periods are runs: code the runs, not the rows.
    per = g["period"].cast(pl.String)[rows]
    new_run = per.ne_missing(per.shift()).fill_null(True).to_numpy()
    run_periods = per.filter(pl.Series(new_run))
    periods = pl.concat([state["last_period"].drop_nulls(), run_periods]).unique().sort()
    game_period = np.searchsorted(periods.to_numpy(), run_periods.to_numpy()).astype(np.int32)[
        np.cumsum(new_run) - 1
    ]
    n_players, n_numbers = c.ids.len(), len(SITE_NUMBERS)

    ratings = np.full((n_players, n_numbers), rules.start, dtype=np.float64)
    counts = np.zeros((n_players, n_numbers), dtype=np.int32)
    last = np.full((n_players, n_numbers), -1, dtype=np.int32)
    present = np.zeros((n_players, n_numbers), dtype=np.bool_)
    if state.height:
        s_p = c.extra_codes
        s_n = state["number"].replace_strict(SITE_NUMBERS, list(range(n_numbers))).to_numpy()
        ratings[s_p, s_n] = state["rating"].to_numpy()
        counts[s_p, s_n] = state["games"].to_numpy()
        last[s_p, s_n] = (
            state["last_period"]
            .replace_strict(periods, list(range(periods.len())), default=-1, return_dtype=pl.Int32)
            .to_numpy()
        )
        present[s_p, s_n] = True

    arrays = g.select(
        pl.col("_score").fill_null(0.0),
        pl.col("_cat").fill_null(0),
        pl.col("w_bot").fill_null(False),
        pl.col("b_bot").fill_null(False),
        pl.col("w_bot_rating").fill_null(0.0),
        pl.col("b_bot_rating").fill_null(0.0),
    )
    weight_of = np.array([rules.weight(cat) for cat in CATEGORIES], dtype=np.float64)
    out = np.full((n if history else 0, 2, 2, 7), np.nan, dtype=np.float64)
    out_games = np.zeros((n if history else 0, 2, 2), dtype=np.int64)
    _site_kernel(
        rows,
        c.w_code,
        c.b_code,
        arrays["_score"].to_numpy(),
        arrays["_cat"].to_numpy(),
        weight_of,
        arrays["w_bot"].to_numpy(),
        arrays["b_bot"].to_numpy(),
        arrays["w_bot_rating"].to_numpy(),
        arrays["b_bot_rating"].to_numpy(),
        game_period,
        ratings,
        counts,
        last,
        rules.k_new,
        rules.k_established,
        rules.k_threshold,
        rules.floor,
        history,
        out,
        out_games,
    )

    present |= counts > 0
    p_idx, n_idx = np.nonzero(present)
    last_of = last[p_idx, n_idx]
    new_state = pl.DataFrame(
        {
            "player_id": c.ids.gather(p_idx),
            "number": pl.Series(SITE_NUMBERS).gather(n_idx),
            "rating": ratings[p_idx, n_idx],
            "games": counts[p_idx, n_idx],
            "last_period": periods.append(pl.Series([None], dtype=pl.String)).gather(
                np.where(last_of < 0, periods.len(), last_of)
            ),
        },
        schema=SITE_STATE_SCHEMA,
    )  # ordered by player_id, then number in SITE_NUMBERS order (ids are sorted)

    if history:
        rated = c.rated_frame().with_columns(
            pl.col("category")
            .cast(pl.String)
            .replace_strict(dict(rules.weights), return_dtype=pl.Float64)
            .alias("weight")
        )
        hist = _history_frame(rated, out, out_games, rules)
    else:
        hist = empty(SITE_HISTORY_SCHEMA)
    return SiteReplayResult(
        history=hist, state=new_state, excluded=_excluded(c), rejected=_rejected(c), rated_games=n
    )


def _history_frame(
    rated: pl.DataFrame, out: np.ndarray, out_games: np.ndarray, rules: SiteRules
) -> pl.DataFrame:
    """One row per human side per game per number from the kernel's output arrays."""
    n = rated.height
    if n == 0:
        return empty(SITE_HISTORY_SCHEMA)
    flat = out.reshape(n * 4, 7)
    pos = np.arange(n * 4)
    side = (pos // 2) % 2
    slot = pos % 2
    base = rated[pos // 4]
    frame = base.with_columns(
        pl.Series("_white", side == 0),
        pl.Series("_slot", slot),
        pl.Series("rating_before", flat[:, 0]),
        pl.Series("opponent_rating", flat[:, 1]),
        pl.Series("expected", flat[:, 2]),
        pl.Series("k", flat[:, 3]),
        pl.Series("raw_change", flat[:, 4]),
        pl.Series("change", flat[:, 5]),
        pl.Series("rating_after", flat[:, 6]),
        pl.Series("games_before", out_games.reshape(n * 4)),
    )
    white = pl.col("_white")
    return frame.filter(
        pl.when(white).then(pl.col("w_bot")).otherwise(pl.col("b_bot")).not_()
    ).select(
        "game_id",
        "played_at",
        "period",
        pl.when(white).then(pl.col("white_id")).otherwise(pl.col("black_id")).alias("player_id"),
        pl.when(pl.col("_slot") == 0)
        .then(pl.lit(SITE_ELO))
        .otherwise(pl.lit("site-") + pl.col("category").cast(pl.String))
        .alias("number"),
        pl.when(white).then(pl.col("black_id")).otherwise(pl.col("white_id")).alias("opponent_id"),
        pl.when(white).then(pl.col("b_bot")).otherwise(pl.col("w_bot")).alias("opponent_is_bot"),
        "rating_before",
        "opponent_rating",
        "expected",
        "k",
        pl.when(pl.col("_slot") == 0).then(pl.col("weight")).otherwise(1.0).alias("weight"),
        pl.when(white)
        .then(pl.col("white_score"))
        .otherwise(1.0 - pl.col("white_score"))
        .alias("score"),
        "raw_change",
        "change",
        "rating_after",
        "games_before",
    )


# --- lists -----------------------------------------------------------------------------------


def site_lists(
    state: pl.DataFrame,
    period: str,
    previous_state: pl.DataFrame | None = None,
    rules: SiteRules = SITE_RULES,
) -> pl.DataFrame:
    """All site lists of `period` in one frame with a `list` column (site-elo, site-blitz, …).

    `state` is the state after the period, `previous_state` the one before it (None at the
    start): games and change in the period are the differences between the two.
    """
    prev = previous_state if previous_state is not None else empty_site_state()
    prev = prev.select(
        "player_id",
        "number",
        pl.col("rating").alias("_prev_rating"),
        pl.col("games").alias("_prev_games"),
    )
    total = pl.col("games")
    rating_int = round_half_away_expr(pl.col("rating"))
    provisional = total < rules.provisional_below
    return (
        state.filter(total >= 1)
        .join(prev, on=["player_id", "number"], how="left")
        .select(
            pl.col("number").alias("list"),
            pl.lit(period, dtype=pl.String).alias("period"),
            "player_id",
            rating_int.alias("rating"),
            pl.col("rating").alias("rating_exact"),
            (total - pl.col("_prev_games").fill_null(0)).alias("games"),
            total.alias("total_games"),
            provisional.alias("provisional"),
            pl.when(provisional)
            .then(rating_int.cast(pl.String) + "?")
            .otherwise(rating_int.cast(pl.String))
            .alias("display"),
            (pl.col("rating") - pl.col("_prev_rating").fill_null(rules.start)).alias("change"),
        )
        .sort(["list", "rating_exact", "player_id"], descending=[False, True, False])
        .cast(SITE_LIST_SCHEMA)  # type: ignore[arg-type]
    )


# --- calculator ------------------------------------------------------------------------------


def site_calculator(
    category: str,
    rating: float,
    opponent: float,
    games: int,
    site_elo: float,
    opponent_site_elo: float,
    site_games: int,
    result: str | float,
    rules: SiteRules = SITE_RULES,
) -> dict[str, object]:
    """One game's effect on a player's category rating and site Elo, every step shown.

    Uses the kernel's own `elo_update` (same formula, K rule, weight and floor as the replay).
    `games`/`site_games` are the rated games before this one in the category / overall.
    """
    if category not in CATEGORIES:
        raise ValueError(f"unknown category {category!r}: one of {', '.join(CATEGORIES)}")
    score = score_of(result)
    weight = rules.weight(category)
    k_cat, k_site = rules.k(games), rules.k(site_games)
    e_c, raw_c, ch_c, new_c = elo_update(
        float(rating), float(opponent), score, k_cat, 1.0, rules.floor
    )
    e_s, raw_s, ch_s, new_s = elo_update(
        float(site_elo), float(opponent_site_elo), score, k_site, weight, rules.floor
    )
    return {
        "category": category,
        "score": score,
        "category_expected": round_half_away(e_c, 4),
        "category_k": k_cat,
        "category_raw_change": raw_c,
        "category_change": round_half_away(ch_c, 2),
        "category_change_exact": ch_c,
        "new_category_rating": round_half_away(new_c, 2),
        "new_category_rating_exact": new_c,
        "category_floored": float(rating) + raw_c < rules.floor,
        "weight": weight,
        "site_expected": round_half_away(e_s, 4),
        "site_k": k_site,
        "site_raw_change": raw_s,
        "site_elo_change": round_half_away(ch_s, 2),
        "site_elo_change_exact": ch_s,
        "new_site_elo": round_half_away(new_s, 2),
        "new_site_elo_exact": new_s,
        "site_floored": float(site_elo) + raw_s < rules.floor,
        "category_expected_exact": e_c,
        "site_expected_exact": e_s,
    }


__all__ = [
    "SITE_ELO",
    "SITE_NUMBERS",
    "SITE_RULES",
    "SiteReplayResult",
    "SiteRules",
    "classify_site_games",
    "empty_site_state",
    "expected_score",
    "site_calculator",
    "site_lists",
    "site_replay",
]
