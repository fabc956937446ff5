"""Which platform games the site rates (RULES §2): every game classified as rated, excluded
(kept, not rated, and why) or rejected (a contradictory record for the quarantine) in one numba
pass over integer-coded columns, and the rated games put in replay order.

Ids and periods are coded to integers once (`rating_core.kernels.codes`) and the closed sets are
read as their Enum codes, so no string is compared per game. Each game is classified once, at
ingest (`split_site_games`: its rejections go to the quarantine, the kept games carry their
decisions in the `site_*` columns); the replay (`replay`) starts from `classify`, which reads
those columns and applies only moderation, decided after ingest. A frame without them (made by
hand, or rated under other rules) is classified here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import polars as pl
from numba import njit
from polars.datatypes import DataTypeClass

from rating_core.kernels.arrays import readonly
from rating_core.kernels.codes import (
    KeyTable,
    dense_codes,
    replay_order,
    rows_where_both_zero,
)
from rating_core.schemas import (
    CATEGORIES,
    GAMES_SCHEMA,
    KINDS,
    PLAYERS_SCHEMA,
    SITE_VERDICTS,
    STATUSES,
    TERMINATIONS,
    Category,
    SiteVerdict,
    empty,
)
from rating_core.systems.site.rules import SITE_RULES, Exclusion, Rejection, SiteRules
from rating_core.text import format_text

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


SITE_GAME_COLUMNS = (
    "game_id",
    "played_at",
    "period",
    "white_id",
    "black_id",
    "white_score",
    "category",
    "rated",
    "status",
    "plies",
    "termination",
    "kind",
    "otb_confirmed",
    "white_is_bot",
    "black_is_bot",
    "white_elo",
    "black_elo",
    "source_file",
    "source_line",
    "source",
    "unrated_reason",
)
"""What the site rules read of a game (the games table's other columns, names, tournament and
time control among them, are left in the lake: a range's games take half the memory)."""

_REQUIRED = 7
"""SITE_GAME_COLUMNS' first columns, which every frame of games has; the others may be absent
(a hand-made frame in a test), and read as nulls."""

SITE_VERDICT_COLUMNS = (
    "site_verdict",
    "site_white_bot",
    "site_black_bot",
    "site_bot_rating",
    "site_score",
    "site_category",
)
"""The games table's columns holding the ingest's classification of a kept platform game (the
rules' inputs are then not read again)."""

SITE_RATED_COLUMNS = (
    *SITE_GAME_COLUMNS[:_REQUIRED],
    "source",
    "unrated_reason",
    *SITE_VERDICT_COLUMNS,
)
"""What the site rating reads of an ingested game: its ids, time and period, the reason its
reader kept it unrated, and the ingest's classification (`classify` reads nothing else of it)."""


def _col_or(frame: pl.DataFrame, name: str, dtype: pl.DataType | DataTypeClass) -> pl.Expr:
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


class GameColumns(NamedTuple):
    """The platform games' integer columns the rules read, one value per game (file order)."""

    w_code: np.ndarray  # int32 player code of white (-1: null)
    b_code: np.ndarray  # int32 player code of black (-1: null)
    missing: np.ndarray  # bool: no time or period (empty: none missing)
    moderated: np.ndarray  # bool: annulled by moderation (empty: none)
    unratable: np.ndarray  # bool: kept unrated by its reader (empty: none)
    casual: np.ndarray  # bool: not rated
    status: np.ndarray  # uint8 code in STATUSES (NULL_CODE, OTHER_CODE)
    term: np.ndarray  # uint8 code in TERMINATIONS
    plies: np.ndarray  # int64, 0 where null
    plies_null: np.ndarray  # bool (empty: no null)
    kind: np.ndarray  # uint8 code in KINDS
    cat: np.ndarray  # uint8 code in CATEGORIES
    otb_confirmed: np.ndarray  # bool, null as False
    w_is_bot: np.ndarray  # bool bot flag of white (empty: no flag at all)
    b_is_bot: np.ndarray  # bool
    w_elo: np.ndarray  # float64 Elo tag of white, NaN none (empty: no tag at all)
    b_elo: np.ndarray  # float64
    score: np.ndarray  # float64 white's score, 0.0 where null
    score_null: np.ndarray  # bool (empty: no null)


class BotRegistry(NamedTuple):
    """The registry's bots, by player code."""

    bots: np.ndarray  # uint64 bitset over player codes: the registry's bots
    ratings: np.ndarray  # float64 the registry's bot_rating per player code, NaN none


class PlyLimits(NamedTuple):
    """The ply counts the rules compare (`SiteRules`)."""

    min_plies: int
    bot_no_move_min_plies: int


class Decisions(NamedTuple):
    """What `_classify_kernel` writes per game."""

    exclude: np.ndarray  # uint8 Exclusion code, 0 none
    reject: np.ndarray  # uint8 Rejection code, 0 none
    final: np.ndarray  # float64 final white score
    final_null: np.ndarray  # bool: the final score stays null
    cat: np.ndarray  # uint8 effective category (bots for any game with a bot)
    w_bot: np.ndarray  # bool
    b_bot: np.ndarray  # bool
    bot_rating: np.ndarray  # float64 the bot side's fixed rating (white's if both), NaN none

    @staticmethod
    def allocate(n: int) -> Decisions:
        """Uninitialised arrays for `n` games (the kernel writes every one)."""
        return Decisions(
            np.empty(n, dtype=np.uint8),
            np.empty(n, dtype=np.uint8),
            np.empty(n, dtype=np.float64),
            np.empty(n, dtype=np.bool_),
            np.empty(n, dtype=np.uint8),
            np.empty(n, dtype=np.bool_),
            np.empty(n, dtype=np.bool_),
            np.empty(n, dtype=np.float64),
        )


@njit(cache=True)
def _classify_kernel(
    games: GameColumns, registry: BotRegistry, limits: PlyLimits, out: Decisions
) -> None:
    """The exclusion and rejection rules (RULES §2), one pass over the games' integer columns.

    Writes per game: exclude/reject (reason codes, first matching rule wins, 0 none; a game its
    reader kept unrated, `unratable`, is excluded right after moderation, and a bot without a
    fixed rating excludes a game only when no rejection rule applies), the final
    white score (a missing bot move from move 10 on is a human loss; `final_null` where it stays
    null), the effective category (bots for any game with a bot), bot flags (flag or registry)
    and the bot's fixed rating (registry, else the Elo tag; NaN none; white's when both are
    bots) into `out`. `registry` holds the registry's bots as a bitset over player codes and
    their bot_rating per code (NaN none). Null masks, the bot flags and the Elo tags may be empty
    arrays (no nulls; no flag or tag at all). A rule reading a missing value does not apply
    (fewer plies than the minimum, a `bot_no_move` termination), except where the rules say what
    a missing value means: an `otb_confirmed` missing is not confirmed, a result missing is
    contradictory.
    """
    w_code, b_code, missing, moderated = games.w_code, games.b_code, games.missing, games.moderated
    unratable, casual, status, term = games.unratable, games.casual, games.status, games.term
    plies, plies_null, kind, cat = games.plies, games.plies_null, games.kind, games.cat
    otb_confirmed, w_is_bot, b_is_bot = games.otb_confirmed, games.w_is_bot, games.b_is_bot
    w_elo, b_elo, score, score_null = games.w_elo, games.b_elo, games.score, games.score_null
    reg_bot, reg_rating = registry.bots, registry.ratings
    min_plies, bot_no_move_min_plies = limits.min_plies, limits.bot_no_move_min_plies
    exclude, reject, final, final_null = out.exclude, out.reject, out.final, out.final_null
    cat_out, w_bot, b_bot, bot_rating = out.cat, out.w_bot, out.b_bot, out.bot_rating
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
class Classified:
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
        if tag not in self.frame.columns:  # games read without their tags (SITE_RATED_COLUMNS)
            return np.where(np.isnan(reg), 0.0, reg)
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


def _registry_bots(players: pl.DataFrame | None) -> pl.DataFrame:
    """The registry's bots and players with a bot rating: player_id, _bot, _bot_rating."""
    players = players if players is not None else empty(PLAYERS_SCHEMA)
    return (
        players.select(
            pl.col("player_id").cast(pl.String),
            pl.col("is_bot").cast(pl.Boolean).fill_null(False).alias("_bot"),
            pl.col("bot_rating").cast(pl.Float64).alias("_bot_rating"),
        )
        .unique("player_id", keep="first", maintain_order=True)
        .filter(pl.col("_bot") | pl.col("_bot_rating").is_not_null())
        .drop_nulls("player_id")
    )


def _bot_arrays(
    n_ids: int, reg_codes: np.ndarray, reg: pl.DataFrame
) -> tuple[np.ndarray, np.ndarray]:
    """(bitset of the registry's bots over player codes, bot_rating per code, NaN none) from
    `_registry_bots` rows and their codes (-1: not among the ids, left out)."""
    known = reg_codes >= 0
    reg_codes = reg_codes[known]
    reg_bot = np.zeros(n_ids // 64 + 1, dtype=np.uint64)
    bots = reg_codes[reg["_bot"].to_numpy()[known]].astype(np.uint64)
    np.bitwise_or.at(reg_bot, bots >> np.uint64(6), np.uint64(1) << (bots & np.uint64(63)))
    reg_rating = np.full(n_ids, np.nan)
    reg_rating[reg_codes] = reg["_bot_rating"].fill_null(np.nan).to_numpy()[known]
    return reg_bot, reg_rating


@dataclass(frozen=True)
class Coding:
    """What a streamed replay codes every batch against: the range's player ids and periods
    (sorted, distinct) and the registry's bots by player code."""

    ids: pl.Series
    periods: pl.Series
    reg_bot: np.ndarray
    reg_rating: np.ndarray
    id_table: KeyTable  # `ids` coded once, each batch looked up in it
    period_table: KeyTable

    @staticmethod
    def of(ids: pl.Series, periods: pl.Series, players: pl.DataFrame | None) -> Coding:
        """The coding of sorted distinct `ids` and `periods`, with `players`' bots."""
        reg = _registry_bots(players)
        id_table = KeyTable(ids)
        reg_bot, reg_rating = _bot_arrays(ids.len(), id_table.positions(reg["player_id"]), reg)
        return Coding(ids, periods, reg_bot, reg_rating, id_table, KeyTable(periods))


def _site_games(games: pl.DataFrame, stored: bool) -> tuple[pl.DataFrame, bool]:
    """(the platform games of `games` with the columns the classification reads, whether they
    carry the ingest's classification and `stored` allows reading it). Without it, the rules'
    inputs a frame lacks read as nulls; a frame with it may lack them (what the rating reads of
    the lake, `SITE_RATED_COLUMNS`), unless a game lacks its classification."""
    has_verdicts = all(name in games.columns for name in SITE_VERDICT_COLUMNS)
    if has_verdicts:
        wanted = (*SITE_GAME_COLUMNS, *SITE_VERDICT_COLUMNS)
        g = games.select(name for name in wanted if name in games.columns)
        if "unrated_reason" not in g.columns:  # the excluded games' reasons read it
            g = g.with_columns(pl.lit(None, dtype=pl.String).alias("unrated_reason"))
    else:
        g = games.select(
            *SITE_GAME_COLUMNS[:_REQUIRED],
            *(_col_or(games, name, GAMES_SCHEMA[name]) for name in SITE_GAME_COLUMNS[_REQUIRED:]),
        )
    if "source" in g.columns:
        source = pl.col("source")
        if not g.select((source.is_null() | (source == "platform")).all()).item():
            g = g.filter(source.is_null() | (source == "platform"))
        g = g.drop("source")
    if g.n_chunks() > 1:  # the outputs gather rows of it: ~10x faster from one chunk
        g = g.rechunk()
    stored = stored and has_verdicts
    if stored and g.get_column("site_verdict").null_count():
        stored = False  # a game without the ingest's classification: classify every game here
    if has_verdicts and not stored:
        lacking = [name for name in SITE_GAME_COLUMNS if name not in g.columns and name != "source"]
        if lacking:
            raise AssertionError(f"site games to classify lack {', '.join(lacking)}")
    return g, stored


def _ingested_decisions(g: pl.DataFrame, moderated: np.ndarray) -> Decisions:
    """The decisions the ingest stored with the games (`SITE_VERDICT_COLUMNS`), an annulled
    game (`moderated`, empty: none) excluded for moderation: what the kernel decides of them."""
    exclude = g.get_column("site_verdict").to_physical().cast(pl.UInt8).to_numpy(writable=True)
    if moderated.shape[0]:
        exclude[moderated] = X_MODERATION
    score = g.get_column("site_score")
    return Decisions(
        exclude,
        np.zeros(g.height, dtype=np.uint8),
        score.fill_null(0.0).to_numpy(writable=True),
        score.is_null().to_numpy(writable=True),
        _enum_codes(g.get_column("site_category"), CATEGORIES, strict=True),
        g.get_column("site_white_bot").fill_null(False).to_numpy(writable=True),
        g.get_column("site_black_bot").fill_null(False).to_numpy(writable=True),
        g.get_column("site_bot_rating").fill_null(np.nan).to_numpy(writable=True),
    )


def _kernel_decisions(
    g: pl.DataFrame,
    w_code: np.ndarray,
    b_code: np.ndarray,
    moderated: np.ndarray,
    reg_bot: np.ndarray,
    reg_rating: np.ndarray,
    rules: SiteRules,
) -> Decisions:
    """The rules applied to the games' columns by `_classify_kernel` (the final score 0.0
    where it stays null)."""
    n = g.height
    missing = _EMPTY_BOOL
    if g["played_at"].null_count() or g["period"].null_count():
        missing = (g["played_at"].is_null() | g["period"].is_null()).to_numpy()
    unratable = _EMPTY_BOOL
    if g["unrated_reason"].null_count() < n:
        unratable = g["unrated_reason"].is_not_null().to_numpy()
    plies_col = g["plies"]
    plies, plies_null = _filled(plies_col.cast(pl.Int64), 0)  # one type: one compiled kernel
    score, score_null = _filled(g["white_score"].cast(pl.Float64), 0.0)
    out = Decisions.allocate(n)
    _classify_kernel(
        GameColumns(
            w_code=readonly(w_code),
            b_code=readonly(b_code),
            missing=readonly(missing),
            moderated=readonly(moderated),
            unratable=readonly(unratable),
            casual=readonly(g["rated"].not_().fill_null(False).to_numpy()),
            status=readonly(_enum_codes(g["status"], STATUSES)),
            term=readonly(_enum_codes(g["termination"], TERMINATIONS)),
            plies=readonly(plies),
            plies_null=readonly(plies_null),
            kind=readonly(_enum_codes(g["kind"], KINDS)),
            cat=readonly(_enum_codes(g["category"], CATEGORIES, strict=True)),
            otb_confirmed=readonly(g["otb_confirmed"].fill_null(False).to_numpy()),
            w_is_bot=readonly(_flags(g["white_is_bot"])),
            b_is_bot=readonly(_flags(g["black_is_bot"])),
            w_elo=readonly(_tags(g["white_elo"])),
            b_elo=readonly(_tags(g["black_elo"])),
            score=readonly(score),
            score_null=readonly(score_null),
        ),
        BotRegistry(readonly(reg_bot), readonly(reg_rating)),
        PlyLimits(rules.min_plies, rules.bot_no_move_min_plies),
        out,
    )
    out.final[out.final_null] = 0.0
    return out


def classify(
    games: pl.DataFrame,
    players: pl.DataFrame | None,
    annulled: Iterable[str] | pl.Series | None,
    rules: SiteRules,
    extra_ids: pl.Series | None = None,
    extra_periods: pl.Series | None = None,
    ordered: bool = True,
    coding: Coding | None = None,
    ingested: bool = True,
) -> Classified:
    """Decide, per platform game, whether it is rated, excluded (why) or rejected (why).
    `ordered=False` leaves the rated games in file order (who is rejected does not depend on
    the replay order: ingest's quarantine skips the sort).

    Games that carry the ingest's classification (`SITE_VERDICT_COLUMNS`, under the site's
    rules) are not classified again (unless `ingested` is False: the ingest's own call): their
    decisions are read and moderation (`annulled`, decided after ingest) applied on top, as the
    kernel would (an annulled game is excluded for it; the ingest kept only games that no rule
    rejects, and moderation rejects none). Other games go through the numba kernel.

    Player ids are coded once (`dense_codes` over `extra_ids`, the registry's bots, white and
    black); the closed sets become their Enum codes and one numba pass applies the rules, so no
    string is compared per game. Periods are coded the same way (with `extra_periods`).
    A streamed replay passes the range's `coding` instead (`players`, `extra_ids` and
    `extra_periods` are then its business): a batch is coded against it.
    """
    g, stored = _site_games(games, ingested and rules == SITE_RULES)
    n = g.height

    if coding is None:
        extra = extra_ids if extra_ids is not None else pl.Series(dtype=pl.String)
        reg = _registry_bots(players)
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
        w_code = codes[n_extra + n_reg : n_extra + n_reg + n]
        b_code = codes[n_extra + n_reg + n :]
        reg_bot, reg_rating = _bot_arrays(ids.len(), codes[n_extra : n_extra + n_reg], reg)
        extra_p = extra_periods if extra_periods is not None else pl.Series(dtype=pl.String)
        p_codes, periods = dense_codes(
            pl.concat([extra_p.cast(pl.String), g["period"].cast(pl.String)])
        )
        period = p_codes[extra_p.len() :]
        extra_period_codes = p_codes[: extra_p.len()]
    else:  # a batch of a streamed replay: its ids and periods are among the range's
        ids, periods = coding.ids, coding.periods
        sides = coding.id_table.positions(pl.concat([g["white_id"], g["black_id"]], rechunk=False))
        w_code, b_code = sides[:n].astype(np.int32), sides[n:].astype(np.int32)
        period = coding.period_table.positions(g["period"]).astype(np.int32)
        reg_bot, reg_rating = coding.reg_bot, coding.reg_rating
        extra_codes = extra_period_codes = np.zeros(0, dtype=np.int32)

    annulled_ids = pl.Series(
        "game_id", list(annulled) if annulled is not None else [], dtype=pl.String
    )
    moderated = _EMPTY_BOOL
    if annulled_ids.len():
        moderated = g["game_id"].is_in(annulled_ids.implode()).fill_null(False).to_numpy()
    if stored:
        out = _ingested_decisions(g, moderated)
    else:
        out = _kernel_decisions(g, w_code, b_code, moderated, reg_bot, reg_rating, rules)
    exclude, reject, final, final_null, cat, w_bot, b_bot, bot_rating = out
    rated = rows_where_both_zero(exclude, reject)
    if ordered:
        t = g["played_at"].to_physical().fill_null(0).to_numpy()
        rated = replay_order(rated, period, t, g["game_id"])
    return Classified(
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
        extra_period_codes,
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
    c = classify(games, players, annulled, rules)
    return c.rated_frame(), excluded_frame(c, rules), rejected_frame(c)


def split_site_games(
    games: pl.DataFrame, players: pl.DataFrame | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The one classification of platform games, at ingest: (the games no rule rejects, with
    their decisions in `SITE_VERDICT_COLUMNS`, which the rating reads instead of classifying
    again; the rejected frame of `classify_site_games`, what ingest quarantines). Under the
    site's rules, with the registry's bots (`players`), without moderation (decided after
    ingest, applied by the rating), without ordering the rated games."""
    c = classify(games, players, None, SITE_RULES, ordered=False, ingested=False)
    if c.frame.height != games.height:
        raise ValueError("only platform games are classified at ingest")
    kept = pl.Series(c.reject == 0)
    categories = list(range(len(CATEGORIES)))
    verdicts = pl.DataFrame(
        {
            "site_verdict": pl.Series(c.exclude).cast(pl.Int64),
            "site_white_bot": c.w_bot,
            "site_black_bot": c.b_bot,
            "site_bot_rating": pl.Series(c.bot_rating).fill_nan(None),
            "site_score": pl.Series(c.score),
            "site_category": pl.Series(c.cat).cast(pl.Int64),
        }
    ).select(
        pl.col("site_verdict").replace_strict(
            list(range(len(SITE_VERDICTS))), SITE_VERDICTS, return_dtype=SiteVerdict
        ),
        "site_white_bot",
        "site_black_bot",
        "site_bot_rating",
        pl.when(pl.Series(c.score_null)).then(None).otherwise("site_score").alias("site_score"),
        pl.col("site_category").replace_strict(
            categories, CATEGORIES, default=None, return_dtype=Category
        ),
    )
    return games.with_columns(verdicts.get_columns()).filter(kept), rejected_frame(c)


def excluded_frame(c: Classified, rules: SiteRules) -> pl.DataFrame:
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


def rejected_frame(c: Classified) -> pl.DataFrame:
    """Rejected games with their reason and the fields that contradict (the quarantine's rows)."""
    rows = np.flatnonzero(c.reject != 0)
    frame = c.frame[rows]  # games read without the rules' inputs (SITE_RATED_COLUMNS) have none
    return frame.with_columns(
        pl.Series("w_bot", c.w_bot[rows]),
        *(
            _col_or(frame, name, GAMES_SCHEMA[name])
            for name in ("source_file", "source_line", "white_score", "termination", "plies")
            if name not in frame.columns
        ),
    ).select(
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
