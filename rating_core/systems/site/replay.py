"""Site ratings (RULES §2): per-category ratings and the weighted site Elo, replayed game by game.

Ids and periods are coded to integers once (`rating_core.kernels.codes`), the closed sets are read as
their Enum codes, and one numba pass applies the exclusion and rejection rules to those integer
columns (no string is compared per game); the sequential replay is a second numba kernel over
one cache-aligned record per player, which reads the rated games' arrays in replay order and
writes the history table's columns in their final row order (the strings are then gathered
from the sets of distinct ids and numbers). The state (rating and game count per player per number) is
all the replay needs, so a period can be replayed from the previous period's state, or a range
of periods in one pass that snapshots the state at each period's end (`replay_range`, behind
`site_replay_periods`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum

import numpy as np
import polars as pl
from numba import njit

from rating_core.kernels.arrays import readonly
from rating_core.kernels.codes import dense_codes, replay_order, rows_where_both_zero
from rating_core.kernels.intrinsics import aligned_empty, prefetch
from rating_core.kernels.memory import populate_behind
from rating_core.rounding import round_half_away, round_half_away_expr
from rating_core.schemas import (
    CATEGORIES,
    KINDS,
    PLAYERS_SCHEMA,
    STATUSES,
    TERMINATIONS,
    TableSchema,
    empty,
)
from rating_core.systems.period_range import check_within, segment_ends, split_by_period
from rating_core.systems.site.elo import elo_update, expected_score, score_of
from rating_core.text import format_text
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
    bot_no_move_min_plies: int = 18  # from this many plies on a missing bot move is a human loss
    weights: tuple[tuple[str, float], ...] = TIME_CONTROL_RULES.weights  # RULES §1 table

    @property
    def bot_no_move_from_move(self) -> int:
        """The move from which a missing bot move is a human loss (after that many plies)."""
        return self.bot_no_move_min_plies // 2 + 1

    def weight(self, category: str) -> float:
        """The category's weight in the site Elo (RULES §1 table)."""
        return dict(self.weights)[category]

    def k(self, games_before: int) -> float:
        """K for a number with `games_before` rated games before this game."""
        return self.k_new if games_before < self.k_threshold else self.k_established


SITE_RULES = SiteRules()

SITE_STATE_SCHEMA: TableSchema = {
    "player_id": pl.String,
    "number": pl.String,  # one of SITE_NUMBERS
    "rating": pl.Float64,  # unrounded
    "games": pl.Int64,  # rated games in this number so far (career)
    "last_period": pl.String,  # period of the last rated game in this number
}

SITE_HISTORY_SCHEMA: TableSchema = {
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

SITE_EXCLUDED_SCHEMA: TableSchema = {
    "game_id": pl.String,
    "period": pl.String,
    "reason": pl.String,
}

SITE_REJECTED_SCHEMA: TableSchema = {
    "game_id": pl.String,
    "period": pl.String,
    "source_file": pl.String,
    "source_line": pl.Int64,
    "value": pl.String,
    "reason": pl.String,
}

SITE_LIST_SCHEMA: TableSchema = {
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


class Exclusion(Enum):
    """Why a platform game is kept but not rated: its code in the classification kernel (0 is
    rated) and its reason, whose numbers come from the rules (`text`)."""

    MODERATION = 1, "annulled by moderation"
    CASUAL = 2, "casual game"
    ABORTED = 3, "aborted"
    STATUS_ANNULLED = 4, "annulled"
    FORFEIT = 5, "forfeit, not rated"
    BYE = 6, "bye, not rated"
    ABORT_TERMINATION = 7, "aborted (termination abort)"
    FEW_PLIES = 8, "aborted before both sides moved (fewer than {rules.min_plies} plies)"
    OTB = 9, "over-the-board game not confirmed by both players"
    BOTH_BOTS = 10, "both sides are bots"
    BOT_NO_MOVE = 11, "bot move missing before move {rules.bot_no_move_from_move}: annulled"
    BOT_RATING = 12, "bot without a fixed rating"
    UNRATED = 13, "kept unrated by its reader"  # placeholder: each game shows its unrated_reason

    def __init__(self, code: int, template: str) -> None:
        self.code = code
        self.template = template

    def text(self, rules: SiteRules = SITE_RULES) -> str:
        """The reason as the excluded table shows it under `rules`."""
        return self.template.format(rules=rules)


class Rejection(Enum):
    """Why a platform game is a contradictory record for the quarantine: its code in the
    classification kernel (0 is none) and its reason."""

    BOT_LOST = 1, "contradictory record: a bot never loses on time or by abandonment"
    MISSING = 2, "missing player id, time or period"
    SELF = 3, "a player cannot play themselves"
    NO_BOT = 4, "termination bot_no_move in a game without a bot"
    NO_PLIES = 5, "termination bot_no_move without a ply count"
    NO_RESULT = 6, "rated game without a result"
    NO_CATEGORY = 7, "rated game without a site category"

    def __init__(self, code: int, text: str) -> None:
        self.code = code
        self._text = text

    def text(self) -> str:
        """The reason as the quarantine shows it."""
        return self._text


# The reasons under the default rules (tests and the run summary match on them).
R_MODERATION = Exclusion.MODERATION.text()
R_CASUAL = Exclusion.CASUAL.text()
R_ABORTED = Exclusion.ABORTED.text()
R_STATUS_ANNULLED = Exclusion.STATUS_ANNULLED.text()
R_FORFEIT = Exclusion.FORFEIT.text()
R_BYE = Exclusion.BYE.text()
R_ABORT_TERMINATION = Exclusion.ABORT_TERMINATION.text()
R_FEW_PLIES = Exclusion.FEW_PLIES.text()
R_OTB = Exclusion.OTB.text()
R_BOTH_BOTS = Exclusion.BOTH_BOTS.text()
R_BOT_NO_MOVE = Exclusion.BOT_NO_MOVE.text()
R_BOT_RATING = Exclusion.BOT_RATING.text()
R_UNRATED = Exclusion.UNRATED.text()
REJ_BOT_LOST = Rejection.BOT_LOST.text()
REJ_NO_BOT = Rejection.NO_BOT.text()
REJ_NO_PLIES = Rejection.NO_PLIES.text()
REJ_NO_RESULT = Rejection.NO_RESULT.text()
REJ_NO_CATEGORY = Rejection.NO_CATEGORY.text()
REJ_SELF = Rejection.SELF.text()
REJ_MISSING = Rejection.MISSING.text()


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


# --- which games are rated ---------------------------------------------------------------------

# The codes as plain integers, which the numba kernel reads as compile-time constants.
X_MODERATION, X_CASUAL = Exclusion.MODERATION.code, Exclusion.CASUAL.code
X_ABORTED, X_ANNULLED = Exclusion.ABORTED.code, Exclusion.STATUS_ANNULLED.code
X_FORFEIT, X_BYE = Exclusion.FORFEIT.code, Exclusion.BYE.code
X_ABORT_TERMINATION, X_FEW_PLIES = Exclusion.ABORT_TERMINATION.code, Exclusion.FEW_PLIES.code
X_OTB, X_BOTH_BOTS = Exclusion.OTB.code, Exclusion.BOTH_BOTS.code
X_BOT_NO_MOVE, X_BOT_RATING = Exclusion.BOT_NO_MOVE.code, Exclusion.BOT_RATING.code
X_UNRATED = Exclusion.UNRATED.code
J_BOT_LOST, J_MISSING, J_SELF = Rejection.BOT_LOST.code, Rejection.MISSING.code, Rejection.SELF.code
J_NO_BOT, J_NO_PLIES = Rejection.NO_BOT.code, Rejection.NO_PLIES.code
J_NO_RESULT, J_NO_CATEGORY = Rejection.NO_RESULT.code, Rejection.NO_CATEGORY.code

# Physical codes of the closed sets the rules test (schemas' Enum order); NULL_CODE is a null,
# OTHER_CODE a string outside the set (only when a column arrives as plain strings).
NULL_CODE, OTHER_CODE = 255, 254
S_ABORTED, S_ANNULLED, S_FORFEIT, S_BYE = (
    STATUSES.index(s) for s in ("aborted", "annulled", "forfeit", "bye")
)
T_TIMEOUT, T_ABANDON, T_ABORT, T_BOT_NO_MOVE = (
    TERMINATIONS.index(t) for t in ("timeout", "abandon", "abort", "bot_no_move")
)
K_OTB = KINDS.index("otb")
C_OTB, C_BOTS = CATEGORIES.index("otb"), CATEGORIES.index("bots")
_EMPTY_BOOL = np.zeros(0, dtype=np.bool_)


def _col_or(frame: pl.DataFrame, name: str, dtype: pl.DataType | type[pl.DataType]) -> pl.Expr:
    """A column of `frame`, or a null column of `dtype` when the frame lacks it."""
    return pl.col(name) if name in frame.columns else pl.lit(None, dtype=dtype).alias(name)


def _enum_codes(col: pl.Series, values: list[str], strict: bool = False) -> np.ndarray:
    """uint8 physical code of each value in the closed set `values` (NULL_CODE for a null,
    OTHER_CODE for a string outside the set; `strict` raises on such a string instead)."""
    enum = pl.Enum(values)
    phys = (col if col.dtype == enum else col.cast(enum, strict=strict)).to_physical()
    codes = phys.fill_null(NULL_CODE).cast(pl.UInt8).to_numpy()
    if phys.null_count() > col.null_count():
        codes = codes.copy()
        codes[(phys.is_null() & col.is_not_null()).to_numpy()] = OTHER_CODE
    return codes


def _flags(col: pl.Series) -> np.ndarray:
    """A Boolean column as a numpy array, null as False; empty when every value is null."""
    if col.null_count() == col.len():
        return _EMPTY_BOOL
    return col.fill_null(False).to_numpy()


def _tags(col: pl.Series) -> np.ndarray:
    """An Elo tag column as float64, null as NaN; empty when every value is null."""
    if col.null_count() == col.len():
        return np.zeros(0, dtype=np.float64)
    return col.cast(pl.Float64).fill_null(np.nan).to_numpy()


def _filled(col: pl.Series, fill: object) -> tuple[np.ndarray, np.ndarray]:
    """(values with nulls replaced by `fill`, null mask or an empty array when no nulls)."""
    if col.null_count() == 0:
        return col.to_numpy(), _EMPTY_BOOL
    return col.fill_null(fill).to_numpy(), col.is_null().to_numpy()


@njit(cache=True, inline="always")
def _in_bitset(bits: np.ndarray, code: int) -> bool:
    """Whether bit `code` (>= 0) of the uint64 bitset is set; False for code -1 (a null id)."""
    if code < 0:
        return False
    return (bits[code >> 6] >> np.uint64(code & 63)) & np.uint64(1) == np.uint64(1)


@njit(cache=True)
def _classify_kernel(
    w_code: np.ndarray,
    b_code: np.ndarray,
    missing: np.ndarray,
    moderated: np.ndarray,
    unratable: np.ndarray,
    casual: np.ndarray,
    status: np.ndarray,
    term: np.ndarray,
    plies: np.ndarray,
    plies_null: np.ndarray,
    kind: np.ndarray,
    cat: np.ndarray,
    otb_confirmed: np.ndarray,
    w_is_bot: np.ndarray,
    b_is_bot: np.ndarray,
    w_elo: np.ndarray,
    b_elo: np.ndarray,
    score: np.ndarray,
    score_null: np.ndarray,
    reg_bot: np.ndarray,
    reg_rating: np.ndarray,
    min_plies: int,
    bot_no_move_min_plies: int,
    exclude: np.ndarray,
    reject: np.ndarray,
    final: np.ndarray,
    final_null: np.ndarray,
    cat_out: np.ndarray,
    w_bot: np.ndarray,
    b_bot: np.ndarray,
    bot_rating: np.ndarray,
) -> None:
    """The exclusion and rejection rules (RULES §2), one pass over the games' integer columns.

    Writes per game: exclude/reject (reason codes, first matching rule wins, 0 none; a game its
    reader kept unrated, `unratable`, is excluded right after moderation, and a bot without a
    fixed rating excludes a game only when no rejection rule applies), the final
    white score (a missing bot move from move 10 on is a human loss; `final_null` where it stays
    null), the effective category (bots for any game with a bot), bot flags (flag or registry)
    and the bot's fixed rating (registry, else the Elo tag; NaN none; white's when both are
    bots). `reg_bot` is a bitset over player codes (registry bots), `reg_rating` the registry's
    bot_rating per code (NaN none). Null masks, the bot flags and the Elo tags may be empty
    arrays (no nulls; no flag or tag at all). A rule reading a missing value does not apply
    (fewer plies than the minimum, a `bot_no_move` termination), except where the rules say what
    a missing value means: an `otb_confirmed` missing is not confirmed, a result missing is
    contradictory.
    """
    has_missing = missing.shape[0] > 0
    has_moderated = moderated.shape[0] > 0
    has_unratable = unratable.shape[0] > 0
    has_plies_null = plies_null.shape[0] > 0
    has_score_null = score_null.shape[0] > 0
    has_w_flag, has_b_flag = w_is_bot.shape[0] > 0, b_is_bot.shape[0] > 0
    has_w_elo, has_b_elo = w_elo.shape[0] > 0, b_elo.shape[0] > 0
    for i in range(w_code.shape[0]):
        wc, bc = w_code[i], b_code[i]
        wb = (has_w_flag and w_is_bot[i]) or _in_bitset(reg_bot, wc)
        bb = (has_b_flag and b_is_bot[i]) or _in_bitset(reg_bot, bc)
        wr = br = np.nan
        if wb:
            wr = reg_rating[wc] if wc >= 0 else np.nan
            if np.isnan(wr) and has_w_elo:
                wr = w_elo[i]
        if bb:
            br = reg_rating[bc] if bc >= 0 else np.nan
            if np.isnan(br) and has_b_elo:
                br = b_elo[i]
        tm = term[i]
        bot_no_move = tm == T_BOT_NO_MOVE
        human_bot = wb != bb
        p_null = has_plies_null and plies_null[i]
        p = plies[i]
        st = status[i]
        x = 0
        if has_moderated and moderated[i]:
            x = X_MODERATION
        elif has_unratable and unratable[i]:
            x = X_UNRATED
        elif casual[i]:
            x = X_CASUAL
        elif st == S_ABORTED:
            x = X_ABORTED
        elif st == S_ANNULLED:
            x = X_ANNULLED
        elif st == S_FORFEIT:
            x = X_FORFEIT
        elif st == S_BYE:
            x = X_BYE
        elif tm == T_ABORT:
            x = X_ABORT_TERMINATION
        elif not p_null and p < min_plies:
            x = X_FEW_PLIES
        elif (kind[i] == K_OTB or cat[i] == C_OTB) and not otb_confirmed[i]:
            x = X_OTB
        elif wb and bb:
            x = X_BOTH_BOTS
        elif bot_no_move and human_bot and not p_null and p < bot_no_move_min_plies:
            x = X_BOT_NO_MOVE
        s_null = has_score_null and score_null[i]
        s = score[i]
        lost_by_bot = not s_null and ((wb and s == 0.0) or (bb and s == 1.0))
        j = 0
        if lost_by_bot and (tm in (T_TIMEOUT, T_ABANDON)):
            j = J_BOT_LOST
        elif x != 0:
            j = 0
        elif wc < 0 or bc < 0 or (has_missing and missing[i]):
            j = J_MISSING
        elif wc == bc:
            j = J_SELF
        elif bot_no_move and not (wb or bb):
            j = J_NO_BOT
        elif bot_no_move and p_null:
            j = J_NO_PLIES
        # no result is contradictory unless the bot no-move rule decides it (a null
        # termination is not `bot_no_move`: a game without result or termination is refused)
        elif s_null and not (bot_no_move and human_bot):
            j = J_NO_RESULT
        elif cat[i] == NULL_CODE and not (wb or bb):
            j = J_NO_CATEGORY
        if x == 0 and j == 0 and ((wb and np.isnan(wr)) or (bb and np.isnan(br))):
            x = X_BOT_RATING  # kept, not rated: the bot has no rating to play against
        exclude[i] = x
        reject[i] = j
        if bot_no_move and human_bot:
            final[i] = 1.0 if wb else 0.0
            final_null[i] = False
        else:
            final[i] = s
            final_null[i] = s_null
        cat_out[i] = C_BOTS if (wb or bb) else cat[i]
        w_bot[i] = wb
        b_bot[i] = bb
        bot_rating[i] = wr if wb else br


@dataclass(frozen=True)
class _Classified:
    """Every platform game with its reason codes, bot fields, player codes and replay order."""

    frame: pl.DataFrame  # the platform games' input columns the outputs need
    ids: pl.Series  # sorted distinct player ids (games, `extra_ids`, registry bots)
    w_code: np.ndarray  # int32 code of white_id in `ids` per game (-1: null)
    b_code: np.ndarray
    extra_codes: np.ndarray  # codes of `extra_ids`
    exclude: np.ndarray  # uint8 Exclusion code, 0 none
    reject: np.ndarray  # uint8 Rejection code, 0 none
    score: np.ndarray  # final white score, 0.0 where null
    score_null: np.ndarray
    cat: np.ndarray  # uint8 effective category (index in CATEGORIES), NULL_CODE none
    w_bot: np.ndarray
    b_bot: np.ndarray
    bot_rating: np.ndarray  # the bot side's fixed rating (white's if both), NaN none
    reg_rating: np.ndarray  # registry bot_rating per player code, NaN none
    period: np.ndarray  # int32 code of each game's period in `periods` (-1: null)
    periods: pl.Series  # sorted distinct periods of the games and of `extra_periods`
    extra_period_codes: np.ndarray
    rated: np.ndarray  # row numbers (into `frame`) of the rated games, in replay order if ordered

    def _fixed_rating(self, code: np.ndarray, tag: str) -> np.ndarray:
        """Per rated game: the registry's bot_rating of a side, else its Elo tag, else 0."""
        r = self.rated
        reg = self.reg_rating[code[r]]
        elo = self.frame[tag].cast(pl.Float64).fill_null(np.nan).to_numpy()[r]
        value = np.where(np.isnan(reg), elo, reg)
        return np.where(np.isnan(value), 0.0, value)

    def rated_frame(self) -> pl.DataFrame:
        """The rated games in replay order with the columns `classify_site_games` documents."""
        r = self.rated
        cat = pl.Series(self.cat[r]).cast(pl.Int64)
        return self.frame.select("game_id", "played_at", "period", "white_id", "black_id")[
            r
        ].with_columns(
            pl.when(pl.Series(self.score_null[r]))
            .then(None)
            .otherwise(pl.Series(self.score[r]))
            .alias("white_score"),
            cat.replace_strict(
                list(range(len(CATEGORIES))), CATEGORIES, return_dtype=pl.Enum(CATEGORIES)
            ).alias("category"),
            pl.Series("w_bot", self.w_bot[r]),
            pl.Series("b_bot", self.b_bot[r]),
            pl.Series("w_bot_rating", self._fixed_rating(self.w_code, "white_elo")),
            pl.Series("b_bot_rating", self._fixed_rating(self.b_code, "black_elo")),
        )


def _classify(
    games: pl.DataFrame,
    players: pl.DataFrame | None,
    annulled: Iterable[str] | pl.Series | None,
    rules: SiteRules,
    extra_ids: pl.Series | None = None,
    extra_periods: pl.Series | None = None,
    ordered: bool = True,
) -> _Classified:
    """Decide, per platform game, whether it is rated, excluded (why) or rejected (why).
    `ordered=False` leaves the rated games in file order (who is rejected does not depend on
    the replay order: ingest's quarantine skips the sort).

    Player ids are coded once (`dense_codes` over `extra_ids`, the registry's bots, white and
    black); the closed sets become their Enum codes and one numba pass applies the rules, so no
    string is compared per game. Periods are coded the same way (with `extra_periods`).
    """
    g = games.select(
        "game_id",
        "played_at",
        "period",
        "white_id",
        "black_id",
        "white_score",
        "category",
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
        _col_or(games, "unrated_reason", pl.String),
    )
    source = pl.col("source")
    if not g.select((source.is_null() | (source == "platform")).all()).item():
        g = g.filter(source.is_null() | (source == "platform"))
    g = g.drop("source")
    if g.n_chunks() > 1:  # the outputs gather rows of it: ~10x faster from one chunk
        g = g.rechunk()
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
    reg_bot = np.zeros(ids.len() // 64 + 1, dtype=np.uint64)
    bots = reg_codes[reg["_bot"].to_numpy()].astype(np.uint64)
    np.bitwise_or.at(reg_bot, bots >> np.uint64(6), np.uint64(1) << (bots & np.uint64(63)))
    reg_rating = np.full(ids.len(), np.nan)
    reg_rating[reg_codes] = reg["_bot_rating"].fill_null(np.nan).to_numpy()

    extra_p = extra_periods if extra_periods is not None else pl.Series(dtype=pl.String)
    p_codes, periods = dense_codes(
        pl.concat([extra_p.cast(pl.String), g["period"].cast(pl.String)])
    )
    period = p_codes[extra_p.len() :]

    missing = _EMPTY_BOOL
    if g["played_at"].null_count() or g["period"].null_count():
        missing = (g["played_at"].is_null() | g["period"].is_null()).to_numpy()
    moderated = _EMPTY_BOOL
    annulled_ids = pl.Series(
        "game_id", list(annulled) if annulled is not None else [], dtype=pl.String
    )
    if annulled_ids.len():
        moderated = g["game_id"].is_in(annulled_ids.implode()).fill_null(False).to_numpy()
    unratable = _EMPTY_BOOL
    if g["unrated_reason"].null_count() < n:
        unratable = g["unrated_reason"].is_not_null().to_numpy()
    plies_col = g["plies"]
    plies, plies_null = _filled(plies_col.cast(pl.Int64), 0)  # one type: one compiled kernel
    score, score_null = _filled(g["white_score"].cast(pl.Float64), 0.0)
    exclude = np.empty(n, dtype=np.uint8)
    reject = np.empty(n, dtype=np.uint8)
    final = np.empty(n, dtype=np.float64)
    final_null = np.empty(n, dtype=np.bool_)
    cat = np.empty(n, dtype=np.uint8)
    w_bot, b_bot = np.empty(n, dtype=np.bool_), np.empty(n, dtype=np.bool_)
    bot_rating = np.empty(n, dtype=np.float64)
    _classify_kernel(
        readonly(w_code),
        readonly(b_code),
        readonly(missing),
        readonly(moderated),
        readonly(unratable),
        readonly(g["rated"].not_().fill_null(False).to_numpy()),
        readonly(_enum_codes(g["status"], STATUSES)),
        readonly(_enum_codes(g["termination"], TERMINATIONS)),
        readonly(plies),
        readonly(plies_null),
        readonly(_enum_codes(g["kind"], KINDS)),
        readonly(_enum_codes(g["category"], CATEGORIES, strict=True)),
        readonly(g["otb_confirmed"].fill_null(False).to_numpy()),
        readonly(_flags(g["white_is_bot"])),
        readonly(_flags(g["black_is_bot"])),
        readonly(_tags(g["white_elo"])),
        readonly(_tags(g["black_elo"])),
        readonly(score),
        readonly(score_null),
        readonly(reg_bot),
        readonly(reg_rating),
        rules.min_plies,
        rules.bot_no_move_min_plies,
        exclude,
        reject,
        final,
        final_null,
        cat,
        w_bot,
        b_bot,
        bot_rating,
    )
    final[final_null] = 0.0
    rated = rows_where_both_zero(exclude, reject)
    if ordered:
        t = g["played_at"].to_physical().fill_null(0).to_numpy()
        rated = replay_order(rated, period, t, g["game_id"])
    return _Classified(
        g,
        ids,
        w_code,
        b_code,
        extra_codes,
        exclude,
        reject,
        final,
        final_null,
        cat,
        w_bot,
        b_bot,
        bot_rating,
        reg_rating,
        period,
        periods,
        p_codes[: extra_p.len()],
        rated,
    )


def classify_site_games(
    games: pl.DataFrame,
    players: pl.DataFrame | None = None,
    annulled: Iterable[str] | pl.Series | None = None,
    rules: SiteRules = SITE_RULES,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Split platform games into (rated, excluded, rejected) frames.

    `rated` is sorted by (period, played_at, game_id) and carries the human-relative fields the
    kernel needs: final white score, effective category, bot flags and bot fixed ratings.
    """
    c = _classify(games, players, annulled, rules)
    return c.rated_frame(), _excluded(c, rules), _rejected(c)


def rejected_site_games(
    games: pl.DataFrame, players: pl.DataFrame | None = None, rules: SiteRules = SITE_RULES
) -> pl.DataFrame:
    """The rejected frame of `classify_site_games` alone (the records the site rules call
    contradictory), without ordering the rated games: what ingest quarantines."""
    return _rejected(_classify(games, players, None, rules, ordered=False))


def _excluded(c: _Classified, rules: SiteRules) -> pl.DataFrame:
    """Excluded games with their reason; a game its reader kept unrated shows that reader's why."""
    rows = np.flatnonzero((c.reject == 0) & (c.exclude != 0))
    reason = pl.Series(c.exclude[rows]).replace_strict(
        {e.code: e.text(rules) for e in Exclusion}, return_dtype=pl.String
    )
    return c.frame.select("game_id", "period", "unrated_reason")[rows].select(
        "game_id",
        "period",
        pl.when(pl.Series(c.exclude[rows] == X_UNRATED))
        .then(pl.col("unrated_reason"))
        .otherwise(reason)
        .alias("reason"),
    )


def _rejected(c: _Classified) -> pl.DataFrame:
    rows = np.flatnonzero(c.reject != 0)
    return (
        c.frame[rows]
        .with_columns(pl.Series("w_bot", c.w_bot[rows]))
        .select(
            "game_id",
            "period",
            "source_file",
            "source_line",
            format_text(
                "white {} bot={} score={} termination={} plies={}",
                pl.col("white_id"),
                pl.col("w_bot"),
                pl.col("white_score"),
                pl.col("termination"),
                pl.col("plies"),
            ).alias("value"),
            pl.Series(c.reject[rows])
            .replace_strict({e.code: e.text() for e in Rejection}, return_dtype=pl.String)
            .alias("reason"),
        )
    )


# --- the sequential replay (numba) -----------------------------------------------------------

# Each player's state is one record: the ratings of the N_NUMBERS numbers (float64), their game
# counts (int32) and the codes of the periods of their last games (int16), padded to whole
# 64-byte cache lines (two for the nine numbers). The kernel reads the records through float64,
# int32 and int16 views of one (players, _RECORD) float64 array, at the indices the declared
# layout gives, so a new category grows the record instead of running into the next one. A game
# reads and writes one record per human, so it touches two records instead of six rows.
N_NUMBERS = 1 + len(CATEGORIES)
_CACHE_LINE = 64


def site_record(n_numbers: int) -> np.dtype:
    """The player record of the site kernel for `n_numbers` numbers, as a numpy structured
    dtype: fields `rating`, `games` and `last` (each of `n_numbers` values) in that order,
    naturally aligned, the whole padded to a multiple of a cache line."""
    packed = np.dtype(
        [
            ("rating", np.float64, (n_numbers,)),
            ("games", np.int32, (n_numbers,)),
            ("last", np.int16, (n_numbers,)),
        ],
        align=True,
    )
    fields = dict(packed.fields or {})
    return np.dtype(
        {
            "names": list(fields),
            "formats": [dtype for dtype, *_ in fields.values()],
            "offsets": [offset for _, offset, *_ in fields.values()],
            "itemsize": -(-packed.itemsize // _CACHE_LINE) * _CACHE_LINE,
        }
    )


SITE_RECORD = site_record(N_NUMBERS)


def _slot(name: str, itemsize: int) -> int:
    """Index of field `name`'s first value in a view of the records as `itemsize`-byte items."""
    offset: int = dict(SITE_RECORD.fields or {})[name][1]
    if offset % itemsize:
        raise AssertionError(f"site record field {name} is not aligned to {itemsize} bytes")
    return offset // itemsize


_RECORD = SITE_RECORD.itemsize // 8  # float64 slots per player
_GAMES = _slot("games", 4)  # int32 index of number 0's game count
_LAST = _slot("last", 2)  # int16 index of number 0's last period
_MAX_PERIODS = np.iinfo(np.int16).max
_AHEAD = 8  # games between prefetching two players' records and replaying their game


@njit(cache=True)
def _held_counts(
    ends: np.ndarray,
    w_idx: np.ndarray,
    b_idx: np.ndarray,
    cat_num: np.ndarray,
    w_bot: np.ndarray,
    b_bot: np.ndarray,
    present: np.ndarray,
) -> np.ndarray:
    """How many numbers players hold after each of `ends` (held before the replay, `present`,
    or played in by a human side of one of the first `end` games, per-game arrays in replay
    order): the sizes of the kernel's snapshots."""
    counts = np.empty(ends.shape[0], dtype=np.int64)
    if ends.shape[0] == 0:
        return counts
    held = present.copy()
    count = 0
    for p in range(held.shape[0]):
        for j in range(held.shape[1]):
            if held[p, j]:
                count += 1
    i = 0
    for seg in range(ends.shape[0]):
        while i < ends[seg]:
            for side in range(2):
                if w_bot[i] if side == 0 else b_bot[i]:
                    continue
                p = w_idx[i] if side == 0 else b_idx[i]
                for slot in range(2):
                    col = 0 if slot == 0 else 1 + cat_num[i]
                    if not held[p, col]:
                        held[p, col] = True
                        count += 1
            i += 1
        counts[seg] = count
    return counts


@njit(cache=True, nogil=True)
def _site_kernel(
    snap_ends: np.ndarray,
    w_idx: np.ndarray,
    b_idx: np.ndarray,
    w_score: np.ndarray,
    cat_num: np.ndarray,
    weights: np.ndarray,
    w_bot: np.ndarray,
    b_bot: np.ndarray,
    bot_r: np.ndarray,
    period: np.ndarray,
    ratings: np.ndarray,
    games: np.ndarray,
    last: np.ndarray,
    present: np.ndarray,
    k_new: float,
    k_est: float,
    k_threshold: int,
    floor: float,
    record: bool,
    h_values: np.ndarray,
    h_games: np.ndarray,
    h_player: np.ndarray,
    h_opponent: np.ndarray,
    h_number: np.ndarray,
    h_opponent_bot: np.ndarray,
    s_player: np.ndarray,
    s_number: np.ndarray,
    s_rating: np.ndarray,
    s_games: np.ndarray,
    s_last: np.ndarray,
) -> int:
    """Replay the rated games (every per-game array is in replay order: game i is the i-th to
    replay), updating the player records, and take a snapshot of the state at each of
    `snap_ends` (the end of every period of a range replay but the last, whose state is the
    records themselves).

    `ratings`, `games` and `last` are float64, int32 and int16 views of the same records (see
    `_RECORD`). When `record`, it writes the history rows in their final order (game, then
    white before black, then site Elo before category; a bot side has none): for row h,
    h_values[:, h] = before, opponent, expected, k, raw change, change, after, weight, score,
    and h_games (games before), h_player, h_opponent (player codes), h_number (index in
    SITE_NUMBERS) and h_opponent_bot. Bot sides keep their fixed rating. cat_num[i] is the
    category index (number 1 + cat_num[i]), weights[cat_num[i]] its weight; bot_r[i] is the
    fixed rating of game i's bot side, period[i] the code of its period (stored, per number,
    as the period of the last game). The records of the game `_AHEAD` places later are
    prefetched, so the cache misses of several games overlap.

    After the first snap_ends[k] games it appends the state (every number a player held before
    the replay, `present`, or has games in), player-major then number order, to the s_player,
    s_number, s_rating, s_games and s_last arrays (sized by `_held_counts`); returns how
    many rows it wrote.
    """
    flat = ratings.reshape(-1)
    n = w_idx.shape[0]
    n_players = ratings.shape[0]
    at = 0
    i = 0
    h = 0  # the game's first history row
    for seg in range(snap_ends.shape[0] + 1):
        stop = snap_ends[seg] if seg < snap_ends.shape[0] else n
        while i < stop:
            if i + _AHEAD < n:
                a = i + _AHEAD
                for line in range(0, _RECORD, _CACHE_LINE // 8):  # every line of both records
                    prefetch(flat, w_idx[a] * _RECORD + line)
                    prefetch(flat, b_idx[a] * _RECORD + line)
            wi = w_idx[i]
            bi = b_idx[i]
            wb = w_bot[i]
            bb = b_bot[i]
            c = cat_num[i]
            per = period[i]
            black_row = h if wb else h + 2  # black's first history row
            for j in range(2):
                col = 0 if j == 0 else 1 + c
                wt = weights[c] if j == 0 else 1.0
                rw = bot_r[i] if wb else ratings[wi, col]
                rb = bot_r[i] if bb else ratings[bi, col]
                for s in range(2):
                    if s == 0:
                        if wb:
                            continue
                        p, q, me, opp, sc, q_bot, row = wi, bi, rw, rb, w_score[i], bb, h + j
                    else:
                        if bb:
                            continue
                        p, q, me, opp, sc = bi, wi, rb, rw, 1.0 - w_score[i]
                        q_bot, row = wb, black_row + j
                    gb = games[p, _GAMES + col]
                    k = k_new if gb < k_threshold else k_est
                    e, raw, applied, after = elo_update(me, opp, sc, k, wt, floor)
                    ratings[p, col] = after
                    games[p, _GAMES + col] = gb + 1
                    last[p, _LAST + col] = per
                    if record:
                        h_values[0, row] = me
                        h_values[1, row] = opp
                        h_values[2, row] = e
                        h_values[3, row] = k
                        h_values[4, row] = raw
                        h_values[5, row] = applied
                        h_values[6, row] = after
                        h_values[7, row] = wt
                        h_values[8, row] = sc
                        h_games[row] = gb
                        h_player[row] = p
                        h_opponent[row] = q
                        h_number[row] = col
                        h_opponent_bot[row] = q_bot
            h += (0 if wb else 2) + (0 if bb else 2)
            i += 1
        if seg == snap_ends.shape[0]:
            break
        for q in range(n_players):
            for j in range(N_NUMBERS):
                if present[q, j] or games[q, _GAMES + j] > 0:
                    if at >= s_player.shape[0]:
                        raise AssertionError("site snapshot larger than _held_counts")
                    s_player[at] = q
                    s_number[at] = j
                    s_rating[at] = ratings[q, j]
                    s_games[at] = games[q, _GAMES + j]
                    s_last[at] = last[q, _LAST + j]
                    at += 1
    return at


@njit(cache=True)
def _state_rows(
    ratings: np.ndarray, games: np.ndarray, last: np.ndarray, present: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(player, number, rating, games, last period) of every number a player holds (present
    before the replay or with games), player-major then number order."""
    n_players = ratings.shape[0]
    k = 0
    for p in range(n_players):
        for j in range(N_NUMBERS):
            if present[p, j] or games[p, _GAMES + j] > 0:
                k += 1
    player = np.empty(k, dtype=np.int32)
    number = np.empty(k, dtype=np.int32)
    rating = np.empty(k, dtype=np.float64)
    count = np.empty(k, dtype=np.int64)
    per = np.empty(k, dtype=np.int32)
    k = 0
    for p in range(n_players):
        for j in range(N_NUMBERS):
            if present[p, j] or games[p, _GAMES + j] > 0:
                player[k] = p
                number[k] = j
                rating[k] = ratings[p, j]
                count[k] = games[p, _GAMES + j]
                per[k] = last[p, _LAST + j]
                k += 1
    return player, number, rating, count, per


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
    return replay_range(games, players, annulled, state, None, rules, history)[0]


def replay_range(
    games: pl.DataFrame,
    players: pl.DataFrame | None,
    annulled: Iterable[str] | pl.Series | None,
    state: pl.DataFrame | None,
    periods: list[str] | None,
    rules: SiteRules = SITE_RULES,
    history: bool = True,
) -> list[SiteReplayResult]:
    """One replay of `games` from `state`, cut into one result per period of `periods` (each
    as if replayed alone from the period before's state), or one result when `periods` is None.

    Ids, periods and rules are coded once and the games replayed in one kernel pass, which
    takes a snapshot of the state at the end of each period (`_site_kernel`).
    """
    state = state if state is not None else empty_site_state()
    c = _classify(
        games,
        players,
        annulled,
        rules,
        extra_ids=state["player_id"],
        extra_periods=state["last_period"],
    )
    rows = c.rated
    n = rows.shape[0]
    n_players, labels = c.ids.len(), c.periods
    if labels.len() > _MAX_PERIODS:
        raise ValueError(f"a site replay spans at most {_MAX_PERIODS} periods")
    if periods is None:
        ends = np.array([n], dtype=np.int64)
    else:
        check_within(c.frame["period"], periods, "a game")
        ends = segment_ends(c.period[rows], labels, periods)

    template = np.zeros(1, dtype=SITE_RECORD)
    template["rating"] = rules.start
    template["last"] = -1  # no game yet
    ratings = aligned_empty((n_players, _RECORD), np.float64)
    ratings[:] = template.view(np.float64)
    counts, last = ratings.view(np.int32), ratings.view(np.int16)
    present = np.zeros((n_players, N_NUMBERS), dtype=np.bool_)
    if state.height:
        s_p = c.extra_codes
        s_n = state["number"].replace_strict(SITE_NUMBERS, list(range(N_NUMBERS))).to_numpy()
        ratings[s_p, s_n] = state["rating"].to_numpy()
        counts[s_p, _GAMES + s_n] = state["games"].to_numpy()
        last[s_p, _LAST + s_n] = c.extra_period_codes
        present[s_p, s_n] = True

    weight_of = np.array([rules.weight(cat) for cat in CATEGORIES], dtype=np.float64)
    # the per-game inputs in replay order: the kernels then read them sequentially
    w_code, b_code, cat, w_bot, b_bot = (
        a[rows] for a in (c.w_code, c.b_code, c.cat, c.w_bot, c.b_bot)
    )
    per_game = 4 - 2 * (w_bot.astype(np.int64) + b_bot.astype(np.int64))  # history rows
    hist_ends = np.cumsum(per_game)
    n_hist = int(hist_ends[-1]) if history and n else 0
    out = _HistoryArrays.allocate(n_hist)
    snap_ends = ends[:-1]  # the last period's state is the records after the kernel
    held = _held_counts(snap_ends, w_code, b_code, cat, w_bot, b_bot, present)
    n_snap = int(held.sum())
    snaps = (
        np.empty(n_snap, dtype=np.int32),
        np.empty(n_snap, dtype=np.int32),
        np.empty(n_snap, dtype=np.float64),
        np.empty(n_snap, dtype=np.int64),
        np.empty(n_snap, dtype=np.int32),
    )
    # each of the 9 value rows is a stream of its own, met from behind like the other columns
    populating = populate_behind([*out.values, *out.arrays()[1:], *snaps])
    try:
        written = _site_kernel(
            snap_ends,
            w_code,
            b_code,
            c.score[rows],
            cat,
            weight_of,
            w_bot,
            b_bot,
            c.bot_rating[rows],
            c.period[rows].astype(np.int16),
            ratings,
            counts,
            last,
            present,
            rules.k_new,
            rules.k_established,
            rules.k_threshold,
            rules.floor,
            n_hist > 0,
            *out.arrays(),
            *snaps,
        )
    finally:  # the history's pages, mapped in from the end while the kernel wrote from the start
        populating.join()
    if written != n_snap:
        raise AssertionError(f"site snapshots: {written} rows written, {n_snap} counted")
    final = _state_rows(ratings, counts, last, present)
    p_idx, n_idx, rating, count, last_of = (
        np.concatenate([a, b]) for a, b in zip(snaps, final, strict=True)
    )
    offsets = np.concatenate([[0], np.cumsum(held), [n_snap + final[0].shape[0]]])
    states = pl.DataFrame(
        {
            "player_id": c.ids.gather(p_idx),
            "number": pl.Series(SITE_NUMBERS).gather(n_idx),
            "rating": rating,
            "games": count,
            "last_period": labels.append(pl.Series([None], dtype=pl.String))
            .rechunk()
            .gather(np.where(last_of < 0, labels.len(), last_of)),
        },
        schema=SITE_STATE_SCHEMA,
    )  # each snapshot ordered by player_id, then number in SITE_NUMBERS order (ids are sorted)

    hist = _history_frame(c, np.repeat(rows, per_game) if n_hist else rows[:0], out)
    bounds = np.concatenate([[0], ends])  # period k's games are rows[bounds[k]:bounds[k + 1]]
    hist_bounds = np.concatenate([[0], hist_ends])[bounds] if n_hist else np.zeros_like(bounds)
    excluded, rejected = _excluded(c, rules), _rejected(c)
    if periods is None:
        excluded_of, rejected_of = [excluded], [rejected]
    else:
        excluded_of = split_by_period(excluded, periods)
        rejected_of = split_by_period(rejected, periods)
    results = []
    for seg in range(ends.shape[0]):
        rated_games = int(bounds[seg + 1] - bounds[seg])
        h_lo, h_hi = hist_bounds[seg], hist_bounds[seg + 1]
        results.append(
            SiteReplayResult(
                history=hist.slice(h_lo, h_hi - h_lo)
                if rated_games and history
                else empty(SITE_HISTORY_SCHEMA),
                state=states.slice(offsets[seg], offsets[seg + 1] - offsets[seg]),
                excluded=excluded_of[seg],
                rejected=rejected_of[seg],
                rated_games=rated_games,
            )
        )
    return results


@dataclass(frozen=True)
class _HistoryArrays:
    """The history rows `_site_kernel` writes, one column per array, in their final order."""

    values: np.ndarray  # (9, rows) float64: the `_HISTORY_VALUES` columns
    games: np.ndarray  # int64 games_before
    player: np.ndarray  # int32 player code of the row's side
    opponent: np.ndarray  # int32 player code of the other side
    number: np.ndarray  # uint8 index in SITE_NUMBERS
    opponent_bot: np.ndarray  # bool

    @staticmethod
    def allocate(rows: int) -> _HistoryArrays:
        """Uninitialised arrays for `rows` history rows (the kernel writes every one)."""
        return _HistoryArrays(
            np.empty((len(_HISTORY_VALUES), rows), dtype=np.float64),
            np.empty(rows, dtype=np.int64),
            np.empty(rows, dtype=np.int32),
            np.empty(rows, dtype=np.int32),
            np.empty(rows, dtype=np.uint8),
            np.empty(rows, dtype=np.bool_),
        )

    def arrays(
        self,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The arrays in `_site_kernel`'s argument order."""
        return self.values, self.games, self.player, self.opponent, self.number, self.opponent_bot


# The float columns of the history in the order of `_site_kernel`'s h_values rows.
_HISTORY_VALUES = (
    "rating_before",
    "opponent_rating",
    "expected",
    "k",
    "raw_change",
    "change",
    "rating_after",
    "weight",
    "score",
)


def _history_frame(c: _Classified, game_rows: np.ndarray, out: _HistoryArrays) -> pl.DataFrame:
    """The history table from the kernel's columns: `game_rows` is each row's game (a row of
    `c.frame`). The numbers are the kernel's arrays, without a copy; the ids and numbers are
    gathered from the small sets of distinct values, not from the games' string columns."""
    if game_rows.shape[0] == 0:
        return empty(SITE_HISTORY_SCHEMA)
    floats = {name: pl.Series(name, v) for name, v in zip(_HISTORY_VALUES, out.values, strict=True)}
    if c.score_null.any() and (null_score := c.score_null[game_rows]).any():
        # a rated game without a result (human-bot, no termination) shows no score
        floats["score"] = pl.select(
            pl.when(pl.Series(null_score)).then(None).otherwise(floats["score"]).alias("score")
        ).to_series()
    games, players, opponents = (pl.Series(a) for a in (game_rows, out.player, out.opponent))
    gathered = pl.select(  # one select: the gathers run side by side, not one after another
        pl.lit(c.frame["game_id"]).gather(games).alias("game_id"),
        pl.lit(c.frame["played_at"]).gather(games).alias("played_at"),
        pl.lit(c.periods).gather(pl.Series(c.period[game_rows])).alias("period"),
        pl.lit(c.ids).gather(players).alias("player_id"),
        pl.lit(_NUMBERS).gather(pl.Series(out.number)).alias("number"),
        pl.lit(c.ids).gather(opponents).alias("opponent_id"),
    )
    columns = {
        **{name: gathered.get_column(name) for name in gathered.columns},
        "opponent_is_bot": pl.Series(out.opponent_bot),
        "games_before": pl.Series(out.games),
        **floats,
    }
    return pl.DataFrame([columns[name].alias(name) for name in SITE_HISTORY_SCHEMA])


_NUMBERS = pl.Series("number", SITE_NUMBERS)


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
    return site_period_lists([state], [period], previous_state, rules)[0]


_PERIOD_INDEX = "_period_index"


def site_period_lists(
    states: Sequence[pl.DataFrame],
    periods: Sequence[str],
    previous_state: pl.DataFrame | None = None,
    rules: SiteRules = SITE_RULES,
) -> list[pl.DataFrame]:
    """`site_lists` of consecutive periods, `states[k]` being the state after `periods[k]` and
    `previous_state` the one before the first: one join and one sort for the whole range
    instead of one per period."""
    if len(states) != len(periods):
        raise ValueError(f"{len(states)} states for {len(periods)} periods")
    if not periods:
        return []
    first = previous_state if previous_state is not None else empty_site_state()
    index = pl.col(_PERIOD_INDEX)

    def numbered(frames: Iterable[pl.DataFrame], *columns: pl.Expr | str) -> pl.DataFrame:
        return pl.concat(
            [
                f.select(pl.lit(k, pl.Int32).alias(_PERIOD_INDEX), "player_id", "number", *columns)
                for k, f in enumerate(frames)
            ],
            how="vertical_relaxed",  # a given state's integer widths may differ from the replay's
        )

    now = numbered(states, "rating", "games")
    prev = numbered(
        [first, *states[:-1]],
        pl.col("rating").alias("_prev_rating"),
        pl.col("games").alias("_prev_games"),
    )
    total = pl.col("games")
    rating_int = round_half_away_expr(pl.col("rating"))
    provisional = total < rules.provisional_below
    lists = (
        now.filter(total >= 1)
        .join(prev, on=[_PERIOD_INDEX, "player_id", "number"], how="left")
        .select(
            index,
            pl.col("number").alias("list"),
            index.replace_strict(range(len(periods)), periods, return_dtype=pl.String).alias(
                "period"
            ),
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
        .sort(
            [_PERIOD_INDEX, "list", "rating_exact", "player_id"],
            descending=[False, False, True, False],
        )
        .cast(SITE_LIST_SCHEMA)
    )
    parts = lists.partition_by(_PERIOD_INDEX, as_dict=True, include_key=False, maintain_order=True)
    empty = lists.clear().drop(_PERIOD_INDEX)
    return [parts.get((k,), empty) for k in range(len(periods))]


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
    "site_period_lists",
    "site_replay",
]
