"""The site replay's numba kernels (RULES §2): one cache-aligned record per player, the rated
games replayed in order with the shared Elo step (`elo`), batch after batch on the same records,
the history written in its final row order, and the state read out of the records
(`state_rows`) at each period's end.

Only arrays and numbers cross into here (no Polars): `replay` codes the games and builds the
frames around these kernels.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from rating_core.kernels.intrinsics import aligned_empty, prefetch
from rating_core.schemas import CATEGORIES
from rating_core.systems.site.elo import elo_update
from rating_core.systems.site.rules import SiteRules

# Each player's state is one record: the ratings of the N_NUMBERS numbers (float64), their game
# counts (int32) and the codes of the periods of their last games (int16), padded to whole
# 64-byte cache lines (two for the nine numbers). The kernel reads the records through float64,
# int32 and int16 views of one (players, RECORD_SLOTS) float64 array, at the indices the declared
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


RECORD_SLOTS = SITE_RECORD.itemsize // 8  # float64 slots per player
GAMES_SLOT = _slot("games", 4)  # int32 index of number 0's game count
LAST_SLOT = _slot("last", 2)  # int16 index of number 0's last period
MAX_PERIODS = np.iinfo(np.int16).max
_AHEAD = 8  # games between prefetching two players' records and replaying their game

# The kernels' inputs and outputs, as named records of arrays (numba passes a NamedTuple as a
# struct of its fields' types, read by attribute, at no cost per game).


class RatedGames(NamedTuple):
    """The rated games' columns in replay order: game i is the i-th to replay."""

    w_idx: np.ndarray  # int32 player code of white
    b_idx: np.ndarray  # int32 player code of black
    w_score: np.ndarray  # float64 white's final score
    cat_num: np.ndarray  # uint8 category index in CATEGORIES: number 1 + cat_num
    w_bot: np.ndarray  # bool
    b_bot: np.ndarray  # bool
    bot_r: np.ndarray  # float64 fixed rating of the bot side
    period: np.ndarray  # int16 code of the game's period


class PlayerRecords(NamedTuple):
    """The player records: float64, int32 and int16 views of one (players, RECORD_SLOTS) array
    (ratings, game counts at GAMES_SLOT, last periods at LAST_SLOT), and which numbers each
    player held before the replay."""

    ratings: np.ndarray
    games: np.ndarray
    last: np.ndarray
    present: np.ndarray  # (players, N_NUMBERS) bool

    @staticmethod
    def allocate(n_players: int, start: float) -> PlayerRecords:
        """Records of `n_players` players with no game yet, every rating at `start`."""
        template = np.zeros(1, dtype=SITE_RECORD)
        template["rating"] = start
        template["last"] = -1  # no game yet
        ratings = aligned_empty((n_players, RECORD_SLOTS), np.float64)
        ratings[:] = template.view(np.float64)
        present = np.zeros((n_players, N_NUMBERS), dtype=np.bool_)
        return PlayerRecords(ratings, ratings.view(np.int32), ratings.view(np.int16), present)


class ReplayRules(NamedTuple):
    """The rules the replay applies (`SiteRules`), as numbers."""

    weights: np.ndarray  # float64 weight in the site Elo per category, in CATEGORIES order
    k_new: float
    k_established: float
    k_threshold: int
    floor: float

    @staticmethod
    def of(rules: SiteRules) -> ReplayRules:
        """`rules` as the kernel reads them."""
        weights = np.array([rules.weight(cat) for cat in CATEGORIES], dtype=np.float64)
        return ReplayRules(
            weights, rules.k_new, rules.k_established, rules.k_threshold, rules.floor
        )


HISTORY_VALUES = (
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
"""The float columns of the history, in the order of `HistoryColumns.values`' rows."""


class HistoryColumns(NamedTuple):
    """The history rows `replay_kernel` writes, one column per array, in their final order."""

    values: np.ndarray  # (9, rows) float64: the `HISTORY_VALUES` columns
    games: np.ndarray  # int64 games_before
    player: np.ndarray  # int32 player code of the row's side
    opponent: np.ndarray  # int32 player code of the other side
    number: np.ndarray  # uint8 index in SITE_NUMBERS
    opponent_bot: np.ndarray  # bool

    @staticmethod
    def allocate(rows: int) -> HistoryColumns:
        """Uninitialised arrays for `rows` history rows (the kernel writes every one)."""
        return HistoryColumns(
            np.empty((len(HISTORY_VALUES), rows), dtype=np.float64),
            np.empty(rows, dtype=np.int64),
            np.empty(rows, dtype=np.int32),
            np.empty(rows, dtype=np.int32),
            np.empty(rows, dtype=np.uint8),
            np.empty(rows, dtype=np.bool_),
        )


@njit(cache=True, nogil=True)
def replay_kernel(
    rated: RatedGames,
    players: PlayerRecords,
    rules: ReplayRules,
    record: bool,
    history: HistoryColumns,
) -> None:
    """Replay the `rated` games (game i is the i-th to replay), updating the player records
    (a streamed replay calls it once per batch, on the same records).

    When `record`, it writes the `history` rows in their final order (game, then white before
    black, then site Elo before category; a bot side has none). Bot sides keep their fixed
    rating. Each game's category weighs `rules.weights[cat_num]` in the site Elo, and its
    period is stored, per number, as the period of the last game. The records of the game
    `_AHEAD` places later are prefetched, so the cache misses of several games overlap.
    """
    w_idx, b_idx, w_score, cat_num = rated.w_idx, rated.b_idx, rated.w_score, rated.cat_num
    w_bot, b_bot, bot_r, period = rated.w_bot, rated.b_bot, rated.bot_r, rated.period
    ratings, games, last = players.ratings, players.games, players.last
    weights, k_new, k_est = rules.weights, rules.k_new, rules.k_established
    k_threshold, floor = rules.k_threshold, rules.floor
    h_values, h_games, h_player = history.values, history.games, history.player
    h_opponent, h_number, h_opponent_bot = history.opponent, history.number, history.opponent_bot
    flat = ratings.reshape(-1)
    n = w_idx.shape[0]
    h = 0  # the game's first history row
    for i in range(n):
        if i + _AHEAD < n:
            a = i + _AHEAD
            for line in range(0, RECORD_SLOTS, _CACHE_LINE // 8):  # every line of both records
                prefetch(flat, w_idx[a] * RECORD_SLOTS + line)
                prefetch(flat, b_idx[a] * RECORD_SLOTS + line)
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
                gb = games[p, GAMES_SLOT + col]
                k = k_new if gb < k_threshold else k_est
                e, raw, applied, after = elo_update(me, opp, sc, k, wt, floor)
                ratings[p, col] = after
                games[p, GAMES_SLOT + col] = gb + 1
                last[p, LAST_SLOT + col] = per
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


@njit(cache=True)
def state_rows(
    players: PlayerRecords,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(player, number, rating, games, last period) of every number a player holds (present
    before the replay or with games), player-major then number order."""
    ratings, games, last, present = players.ratings, players.games, players.last, players.present
    n_players = ratings.shape[0]
    k = 0
    for p in range(n_players):
        for j in range(N_NUMBERS):
            if present[p, j] or games[p, GAMES_SLOT + j] > 0:
                k += 1
    player = np.empty(k, dtype=np.int32)
    number = np.empty(k, dtype=np.int32)
    rating = np.empty(k, dtype=np.float64)
    count = np.empty(k, dtype=np.int64)
    per = np.empty(k, dtype=np.int32)
    k = 0
    for p in range(n_players):
        for j in range(N_NUMBERS):
            if present[p, j] or games[p, GAMES_SLOT + j] > 0:
                player[k] = p
                number[k] = j
                rating[k] = ratings[p, j]
                count[k] = games[p, GAMES_SLOT + j]
                per[k] = last[p, LAST_SLOT + j]
                k += 1
    return player, number, rating, count, per
