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

from rating_core.elo import elo_update, expected_score, score_of
from rating_core.rounding import round_half_away, round_half_away_expr
from rating_core.schemas import CATEGORIES, PLAYERS_SCHEMA, empty

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
    weights: tuple[tuple[str, float], ...] = (
        ("classical", 1.0),
        ("rapid", 1.0),
        ("blitz", 0.75),
        ("bullet", 0.5),
        ("unlimited", 0.75),
        ("correspondence", 0.5),
        ("otb", 0.75),
        ("bots", 0.5),
    )

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


def _col_or(frame: pl.DataFrame, name: str, dtype: pl.DataType) -> pl.Expr:
    """A column of `frame`, or a null column of `dtype` when the frame lacks it."""
    return pl.col(name) if name in frame.columns else pl.lit(None, dtype=dtype).alias(name)


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
    if "source" in games.columns:
        games = games.filter(pl.col("source").is_null() | (pl.col("source") == "platform"))
    players = players if players is not None else empty(PLAYERS_SCHEMA)
    reg = players.select(
        pl.col("player_id").cast(pl.String),
        pl.col("is_bot").cast(pl.Boolean).fill_null(False).alias("_bot"),
        pl.col("bot_rating").cast(pl.Float64).alias("_bot_rating"),
    ).unique("player_id", keep="first", maintain_order=True)
    annulled_ids = pl.Series(
        "game_id", list(annulled) if annulled is not None else [], dtype=pl.String
    )

    g = games.select(
        "game_id",
        "played_at",
        "period",
        "white_id",
        "black_id",
        "white_score",
        "category",
        _col_or(games, "rated", pl.Boolean),
        _col_or(games, "status", pl.String).cast(pl.String),
        _col_or(games, "plies", pl.Int32),
        _col_or(games, "termination", pl.String).cast(pl.String),
        _col_or(games, "kind", pl.String).cast(pl.String),
        _col_or(games, "otb_confirmed", pl.Boolean),
        _col_or(games, "white_is_bot", pl.Boolean),
        _col_or(games, "black_is_bot", pl.Boolean),
        _col_or(games, "white_elo", pl.Int32),
        _col_or(games, "black_elo", pl.Int32),
        _col_or(games, "source_file", pl.String),
        _col_or(games, "source_line", pl.Int64),
    )
    g = g.join(
        reg.rename({"player_id": "white_id", "_bot": "_wb", "_bot_rating": "_wr"}),
        on="white_id",
        how="left",
        maintain_order="left",
    ).join(
        reg.rename({"player_id": "black_id", "_bot": "_bb", "_bot_rating": "_br"}),
        on="black_id",
        how="left",
        maintain_order="left",
    )
    w_bot = pl.col("white_is_bot").fill_null(False) | pl.col("_wb").fill_null(False)
    b_bot = pl.col("black_is_bot").fill_null(False) | pl.col("_bb").fill_null(False)
    g = g.with_columns(
        w_bot.alias("w_bot"),
        b_bot.alias("b_bot"),
        pl.coalesce("_wr", pl.col("white_elo").cast(pl.Float64)).alias("w_bot_rating"),
        pl.coalesce("_br", pl.col("black_elo").cast(pl.Float64)).alias("b_bot_rating"),
    ).drop("_wb", "_bb", "_wr", "_br")

    any_bot = pl.col("w_bot") | pl.col("b_bot")
    human_bot = pl.col("w_bot") ^ pl.col("b_bot")
    term = pl.col("termination")
    bot_no_move = term == "bot_no_move"
    plies = pl.col("plies")
    lost_by_bot = (pl.col("w_bot") & (pl.col("white_score") == 0.0)) | (
        pl.col("b_bot") & (pl.col("white_score") == 1.0)
    )

    exclude = (
        pl.when(pl.col("game_id").is_in(annulled_ids.implode()))
        .then(pl.lit(R_MODERATION))
        .when(pl.col("rated").fill_null(True).not_())
        .then(pl.lit(R_CASUAL))
        .when(pl.col("status") == "aborted")
        .then(pl.lit(R_ABORTED))
        .when(pl.col("status") == "annulled")
        .then(pl.lit(R_STATUS_ANNULLED))
        .when(pl.col("status") == "forfeit")
        .then(pl.lit(R_FORFEIT))
        .when(pl.col("status") == "bye")
        .then(pl.lit(R_BYE))
        .when(term == "abort")
        .then(pl.lit(R_ABORT_TERMINATION))
        .when(plies < rules.min_plies)
        .then(pl.lit(R_FEW_PLIES))
        .when(
            ((pl.col("kind") == "otb") | (pl.col("category") == "otb"))
            & pl.col("otb_confirmed").fill_null(False).not_()
        )
        .then(pl.lit(R_OTB))
        .when(pl.col("w_bot") & pl.col("b_bot"))
        .then(pl.lit(R_BOTH_BOTS))
        .when(bot_no_move & human_bot & (plies < rules.bot_no_move_min_plies))
        .then(pl.lit(R_BOT_NO_MOVE))
        .otherwise(pl.lit(None, dtype=pl.String))
    )
    reject = (
        pl.when(lost_by_bot & term.is_in(["timeout", "abandon"]))
        .then(pl.lit(REJ_BOT_LOST))
        .when(pl.col("_exclude").is_not_null())
        .then(pl.lit(None, dtype=pl.String))
        .when(
            pl.col("white_id").is_null()
            | pl.col("black_id").is_null()
            | pl.col("played_at").is_null()
            | pl.col("period").is_null()
        )
        .then(pl.lit(REJ_MISSING))
        .when(pl.col("white_id") == pl.col("black_id"))
        .then(pl.lit(REJ_SELF))
        .when(bot_no_move & any_bot.not_())
        .then(pl.lit(REJ_NO_BOT))
        .when(bot_no_move & plies.is_null())
        .then(pl.lit(REJ_NO_PLIES))
        .when(
            (pl.col("w_bot") & pl.col("w_bot_rating").is_null())
            | (pl.col("b_bot") & pl.col("b_bot_rating").is_null())
        )
        .then(pl.lit(REJ_BOT_RATING))
        .when(pl.col("white_score").is_null() & (bot_no_move & human_bot).not_())
        .then(pl.lit(REJ_NO_RESULT))
        .when(pl.col("category").is_null() & any_bot.not_())
        .then(pl.lit(REJ_NO_CATEGORY))
        .otherwise(pl.lit(None, dtype=pl.String))
    )
    g = g.with_columns(exclude.alias("_exclude")).with_columns(reject.alias("_reject"))

    rejected = g.filter(pl.col("_reject").is_not_null()).select(
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
        pl.col("_reject").alias("reason"),
    )
    excluded = g.filter(pl.col("_reject").is_null() & pl.col("_exclude").is_not_null()).select(
        "game_id", "period", pl.col("_exclude").alias("reason")
    )
    # From move 10 on, a missing bot move is a loss for the human whatever the record says.
    final_score = (
        pl.when(bot_no_move & human_bot)
        .then(pl.when(pl.col("w_bot")).then(1.0).otherwise(0.0))
        .otherwise(pl.col("white_score"))
    )
    rated = (
        g.filter(pl.col("_reject").is_null() & pl.col("_exclude").is_null())
        .with_columns(
            final_score.alias("white_score"),
            pl.when(any_bot)
            .then(pl.lit("bots"))
            .otherwise(pl.col("category").cast(pl.String))
            .cast(pl.Enum(CATEGORIES))
            .alias("category"),
        )
        .select(
            "game_id",
            "played_at",
            "period",
            "white_id",
            "black_id",
            "white_score",
            "category",
            "w_bot",
            "b_bot",
            pl.col("w_bot_rating").fill_null(0.0),
            pl.col("b_bot_rating").fill_null(0.0),
        )
        .sort("period", "played_at", "game_id")
    )
    return rated, excluded, rejected


# --- the sequential replay (numba) -----------------------------------------------------------


@njit(cache=True)
def _site_kernel(
    w_idx: np.ndarray,
    b_idx: np.ndarray,
    w_score: np.ndarray,
    cat_num: np.ndarray,
    weight: np.ndarray,
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
    """Replay rated games in order, updating `ratings`/`games`/`last` in place.

    For game i, side s (0 white, 1 black) and slot j (0 site Elo, 1 category) it writes, when
    `record`, out[i, s, j, :] = before, opponent, expected, k, raw change, change, after and
    out_games[i, s, j] = games before. Bot sides keep their fixed rating and are not written.
    """
    n = w_idx.shape[0]
    for i in range(n):
        for j in range(2):
            col = 0 if j == 0 else cat_num[i]
            wt = weight[i] if j == 0 else 1.0
            wi = w_idx[i]
            bi = b_idx[i]
            rw = w_bot_r[i] if w_bot[i] else ratings[wi, col]
            rb = b_bot_r[i] if b_bot[i] else ratings[bi, col]
            for s in range(2):
                if s == 0:
                    if w_bot[i]:
                        continue
                    p, me, opp, sc = wi, rw, rb, w_score[i]
                else:
                    if b_bot[i]:
                        continue
                    p, me, opp, sc = bi, rb, rw, 1.0 - w_score[i]
                gb = games[p, col]
                k = k_new if gb < k_threshold else k_est
                e, raw, applied, after = elo_update(me, opp, sc, k, wt, floor)
                ratings[p, col] = after
                games[p, col] = gb + 1
                last[p, col] = period[i]
                if record:
                    out[i, s, j, 0] = me
                    out[i, s, j, 1] = opp
                    out[i, s, j, 2] = e
                    out[i, s, j, 3] = k
                    out[i, s, j, 4] = raw
                    out[i, s, j, 5] = applied
                    out[i, s, j, 6] = after
                    out_games[i, s, j] = gb


def _index(values: pl.Series, table: pl.DataFrame, key: str) -> np.ndarray:
    """Dense integer codes of `values` looked up in `table` (columns `key`, `idx`)."""
    frame = values.alias(key).to_frame()
    joined = frame.join(table, on=key, how="left", maintain_order="left")
    return joined.get_column("idx").to_numpy()


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
    rated, excluded, rejected = classify_site_games(games, players, annulled, rules)
    rated = rated.with_columns(
        pl.col("category")
        .cast(pl.String)
        .replace_strict(dict(rules.weights), return_dtype=pl.Float64)
        .alias("weight")
    )
    n = rated.height

    ids = (
        pl.concat([state.get_column("player_id"), rated["white_id"], rated["black_id"]])
        .unique()
        .sort()
    )
    id_table = pl.DataFrame({"player_id": ids}).with_row_index("idx")
    periods = pl.concat([state.get_column("last_period"), rated["period"]]).drop_nulls()
    periods = periods.unique().sort()
    period_table = pl.DataFrame({"period": periods}).with_row_index("idx")
    n_players, n_numbers = ids.len(), len(SITE_NUMBERS)

    ratings = np.full((n_players, n_numbers), rules.start, dtype=np.float64)
    counts = np.zeros((n_players, n_numbers), dtype=np.int32)
    last = np.full((n_players, n_numbers), -1, dtype=np.int16)
    present = np.zeros((n_players, n_numbers), dtype=np.bool_)
    if state.height:
        s_p = _index(state["player_id"], id_table, "player_id")
        s_n = state["number"].replace_strict(SITE_NUMBERS, list(range(n_numbers))).to_numpy()
        ratings[s_p, s_n] = state["rating"].to_numpy()
        counts[s_p, s_n] = state["games"].to_numpy()
        lp = state["last_period"]
        last[s_p, s_n] = np.where(
            lp.is_null().to_numpy(), -1, _index(lp.fill_null(""), period_table, "period")
        ).astype(np.int16)
        present[s_p, s_n] = True

    cat_code = rated["category"].to_physical().cast(pl.Int64).to_numpy()
    both = _index(pl.concat([rated["white_id"], rated["black_id"]]), id_table, "player_id")
    w_idx, b_idx = both[:n].astype(np.int64), both[n:].astype(np.int64)
    per = rated["period"].cast(pl.Enum(periods)).to_physical().to_numpy().astype(np.int16)
    out = np.full((n if history else 0, 2, 2, 7), np.nan, dtype=np.float64)
    out_games = np.zeros((n if history else 0, 2, 2), dtype=np.int64)
    _site_kernel(
        w_idx,
        b_idx,
        rated["white_score"].to_numpy().astype(np.float64),
        cat_code + 1,
        rated["weight"].to_numpy(),
        rated["w_bot"].to_numpy(),
        rated["b_bot"].to_numpy(),
        rated["w_bot_rating"].to_numpy().astype(np.float64),
        rated["b_bot_rating"].to_numpy().astype(np.float64),
        per,
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
    last_period = (
        pl.DataFrame({"idx": last[p_idx, n_idx].astype(np.int64)})
        .join(period_table.cast({"idx": pl.Int64}), on="idx", how="left", maintain_order="left")
        .get_column("period")
    )
    new_state = pl.DataFrame(
        {
            "player_id": ids.gather(p_idx),
            "number": pl.Series(SITE_NUMBERS).gather(n_idx),
            "rating": ratings[p_idx, n_idx],
            "games": counts[p_idx, n_idx],
            "last_period": last_period,
        },
        schema=SITE_STATE_SCHEMA,
    )  # ordered by player_id, then number in SITE_NUMBERS order (ids are sorted)

    hist = _history_frame(rated, out, out_games, rules) if history else empty(SITE_HISTORY_SCHEMA)
    return SiteReplayResult(
        history=hist, state=new_state, excluded=excluded, rejected=rejected, rated_games=n
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
