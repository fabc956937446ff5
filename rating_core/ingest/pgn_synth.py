"""Synthetic Lichess-style PGN generator for the ingest benchmark and the differential tests.

A few hundred legal game bodies are played out with python-chess once, then reused under varied
headers, so that hundreds of thousands of realistic games are written in seconds.
"""

from __future__ import annotations

import gzip
import random
import string
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import chess
import numpy as np

_NAMES = [
    "alanbrito4",
    "Meridyan",
    "Sasha2020",
    "TITO2056",
    "mohammadX1X",
    "ams56",
    "Zoë_K",
    "Łukasz-PL",
    "maia1",
    "stockfish-lite",
    "knightrider",
    "pawnstorm",
    "Ólafur",
    "queen_bee",
    "rookie99",
    "e4e5enjoyer",
]
_BOTS = ["maia1", "stockfish-lite"]
_TIME_CONTROLS = ["60+0", "120+1", "180+0", "180+2", "300+0", "300+3", "600+0", "900+10", "1800+0"]
_TERMINATIONS = ["Normal", "Normal", "Normal", "Time forfeit", "Abandoned"]
_EXTRA_TERMINATIONS = ["Rules infraction", "Unterminated", "Something else", "abort", "expired"]
_RESULTS = ["1-0", "0-1", "1/2-1/2"]
_BLOCK = 10_000  # games encoded and written at a time
_OPENINGS = [("C46", "Three Knights Opening"), ("C42", "Petrov's Defense"), ("A10", "English")]


@dataclass(frozen=True)
class Body:
    """One game's movetext (without the result token) and its number of main-line plies."""

    tokens: tuple[str, ...]
    plies: int


def _clock(rng: random.Random) -> str:
    """A `%clk` comment as Lichess writes it."""
    s = rng.randint(0, 600)
    return f"{{ [%clk 0:{s // 60:02d}:{s % 60:02d}] }}"


def _variation(board: chess.Board, rng: random.Random, depth: int) -> str:
    """A legal side line from `board` (the position before the main-line move), maybe nested."""
    b = board.copy()
    parts: list[str] = []
    for i in range(rng.randint(1, 3)):
        moves = list(b.legal_moves)
        if not moves:
            break
        if i == 1 and depth < 2 and rng.random() < 0.5:
            nested = _variation(b, rng, depth + 1)
            move = rng.choice(moves)
            parts.append(b.san(move))
            parts.append(nested)
        else:
            move = rng.choice(moves)
            parts.append(b.san(move))
        b.push(move)
    if not parts:
        return ""
    return "( " + " ".join(parts) + " )"


def make_body(
    rng: random.Random, *, extras: bool = False, min_plies: int = 60, max_plies: int = 100
) -> Body:
    """Play random legal moves and write them Lichess style; `extras` adds NAGs, variations, notes."""
    board = chess.Board()
    target = rng.randint(min_plies, max_plies)
    tokens: list[str] = []
    while len(board.move_stack) < target and not board.is_game_over():
        move = rng.choice(list(board.legal_moves))
        ply = len(board.move_stack)
        number = f"{ply // 2 + 1}." if ply % 2 == 0 else f"{ply // 2 + 1}..."
        san = board.san(move)
        before = board.copy() if extras else None
        board.push(move)
        tokens.append(number)
        if extras and rng.random() < 0.05:
            san += rng.choice(["!", "?", "!?", "?!", "!!", "??"])
        tokens.append(san)
        if extras and rng.random() < 0.05:
            tokens.append(f"${rng.randint(1, 20)}")
        tokens.append(_clock(rng))
        if extras and rng.random() < 0.04:
            tokens.append("{ better was (maybe) Nf3 or O-O; see 12. Qxd7 }")
        if extras and before is not None and rng.random() < 0.05:
            var = _variation(before, rng, 0)
            if var:
                tokens.append(var)
    return Body(tuple(tokens), len(board.move_stack))


def make_bodies(
    n: int, seed: int = 0, *, extras: bool = False, min_plies: int = 60, max_plies: int = 100
) -> list[Body]:
    """`n` distinct game bodies, reproducible from `seed`."""
    rng = random.Random(seed)
    return [
        make_body(rng, extras=extras, min_plies=min_plies, max_plies=max_plies) for _ in range(n)
    ]


def _wrap(tokens: list[str], rng: random.Random, extras: bool) -> str:
    """Join movetext tokens; with `extras`, wrap at 80 columns and sprinkle `;` and `%` lines."""
    if not extras:
        return " ".join(tokens)
    lines: list[str] = []
    current = ""
    for tok in tokens:
        if current and len(current) + 1 + len(tok) > 80:
            if rng.random() < 0.1:
                current += " ; a rest-of-line comment { with Nf3 ( e4"
            lines.append(current)
            if rng.random() < 0.03:
                lines.append("% an escaped line Nf3 e4")
            current = tok
        else:
            current = f"{current} {tok}" if current else tok
    lines.append(current)
    return "\n".join(lines)


def generate_pgn(
    path: Path,
    n_games: int,
    *,
    seed: int = 0,
    extras: bool = False,
    n_bodies: int = 300,
    n_players: int | None = None,
    n_months: int | None = None,
    first_month: str = "2024-01",
    min_plies: int = 60,
    max_plies: int = 100,
) -> Path:
    """Write `n_games` Lichess-style games to `path` (`.gz` compresses) and return the path.

    `extras` mixes in what the reader must survive: comments with parentheses, nested variations,
    NAGs, BOT titles, casual games, `-` time controls, FIDE ids, wrapped movetext.
    `n_players` draws the players from that many names (the 16 sample names, then `player17`...)
    instead of the 16 sample names; `n_months` spreads the games evenly over that many calendar
    months from `first_month` (`YYYY-MM`) instead of two years of seconds. With either, the Site
    ids come from the game's number, so they are unique, and the random stream does not depend
    on `n_months`: the same seed writes the same games whatever months they are spread over.
    `min_plies` and `max_plies` bound the length of the game bodies.
    """
    rng = random.Random(seed)
    bodies = make_bodies(
        min(n_bodies, max(n_games, 1)),
        seed,
        extras=extras,
        min_plies=min_plies,
        max_plies=max_plies,
    )
    year, month = (int(part) for part in first_month.split("-"))
    start = datetime(year, month, 1)
    people = _players(n_players)
    draw = _Draw(
        rng, start, people, n_months, unique_ids=people is not None or n_months is not None
    )
    opener = gzip.open if path.suffix.lower() == ".gz" else open  # as the reader: any case
    with opener(path, "wb") as out:  # written a block of games at a time: memory stays small
        for first in range(0, n_games, _BLOCK):
            games = range(first, min(first + _BLOCK, n_games))
            text = "".join(_game(i, bodies, draw, extras) for i in games)
            out.write(text.encode("utf-8"))
    return path


def _players(n_players: int | None) -> list[str] | None:
    """`n_players` distinct player names, the sample names first (bots included); None keeps the
    sample names drawn as they always were."""
    if n_players is None:
        return None
    if n_players < 2:
        raise ValueError(f"a game needs two players, not n_players={n_players}")
    return _NAMES[:n_players] + [f"player{k + 1}" for k in range(len(_NAMES), n_players)]


_ALPHABET = string.ascii_letters + string.digits
_ID_SPACE = len(_ALPHABET) ** 8  # Lichess game ids: 8 letters or digits
_ID_STEP = 48_271 * 1_000_003  # odd and not a multiple of 31: coprime to 62**8, so a bijection


def _month_starts(start: datetime, n_months: int) -> list[datetime]:
    """The first instant of each of `n_months` calendar months from `start`, and of the next."""
    out = []
    for k in range(n_months + 1):
        months = start.month - 1 + k
        out.append(datetime(start.year + months // 12, months % 12 + 1, 1))
    return out


class _Draw:
    """The per-game random draws of one file: players, date and Site id."""

    def __init__(
        self,
        rng: random.Random,
        start: datetime,
        people: list[str] | None,
        n_months: int | None,
        *,
        unique_ids: bool,
    ) -> None:
        self.rng = rng
        self.start = start
        self.people = people
        self.months = _month_starts(start, n_months) if n_months is not None else None
        self.unique_ids = unique_ids

    def players(self) -> tuple[str, str]:
        """White and Black, two different players."""
        if self.people is None:
            white, black = self.rng.sample(_NAMES, 2)
            return white, black
        n = len(self.people)
        w = self.rng.randrange(n)
        b = self.rng.randrange(n - 1)
        return self.people[w], self.people[b + (b >= w)]

    def when(self) -> datetime:
        """When the game started: two years of seconds from the start, or an even spread over
        the months (two uniform draws whatever the number of months)."""
        if self.months is None:
            return self.start + timedelta(seconds=self.rng.randrange(0, 2 * 365 * 86400))
        month = min(int(self.rng.random() * (len(self.months) - 1)), len(self.months) - 2)
        first, end = self.months[month], self.months[month + 1]
        seconds = int(self.rng.random() * (end - first).total_seconds())
        return first + timedelta(seconds=seconds)

    def game_id(self, i: int) -> str:
        """Game `i`'s Lichess id: random, or unique (a bijection of `i` written in base 62)."""
        if not self.unique_ids:
            return "".join(self.rng.choices(_ALPHABET, k=8))
        code = (i * _ID_STEP + 12_345_678_901) % _ID_SPACE
        chars = []
        for _ in range(8):
            code, digit = divmod(code, len(_ALPHABET))
            chars.append(_ALPHABET[digit])
        return "".join(chars)


def _game(i: int, bodies: list[Body], draw: _Draw, extras: bool) -> str:
    """Game number `i` (from 0) of the file, drawing from the file's random stream."""
    rng = draw.rng
    body = bodies[i % len(bodies)]
    white, black = draw.players()
    result = rng.choice(_RESULTS)
    when = draw.when()
    event, tc = "Rated Blitz game", rng.choice(_TIME_CONTROLS)
    termination = rng.choice(_TERMINATIONS)
    tags = [
        ("Event", event),
        ("Site", "https://lichess.org/" + draw.game_id(i)),
        ("Date", when.strftime("%Y.%m.%d")),
        ("Round", "-"),
        ("White", white),
        ("Black", black),
        ("Result", result),
        ("UTCDate", when.strftime("%Y.%m.%d")),
        ("UTCTime", when.strftime("%H:%M:%S")),
        ("WhiteElo", str(rng.randint(800, 2800))),
        ("BlackElo", str(rng.randint(800, 2800))),
        ("WhiteRatingDiff", f"{rng.randint(-9, 9):+d}"),
        ("BlackRatingDiff", f"{rng.randint(-9, 9):+d}"),
    ]
    if white in _BOTS:
        tags.append(("WhiteTitle", "BOT"))
    if black in _BOTS:
        tags.append(("BlackTitle", "BOT"))
    eco, opening = rng.choice(_OPENINGS)
    tags += [("ECO", eco), ("Opening", opening), ("TimeControl", tc)]
    tags.append(("Termination", termination))
    if extras:
        tags = _vary(tags, rng)
    head = "\n".join(f'[{k} "{v}"]' for k, v in tags)
    movetext = _wrap([*body.tokens, result], rng, extras)
    return f"{head}\n\n{movetext}\n\n"


def _vary(tags: list[tuple[str, str]], rng: random.Random) -> list[tuple[str, str]]:
    """Perturb one game's tags with the variety a real export has (for the differential tests)."""
    d = dict(tags)
    r = rng.random()
    if r < 0.15:
        d["Event"] = "Casual Blitz game"
    elif r < 0.22:
        d["Event"], d["TimeControl"] = "Rated Correspondence game", "-"
    elif r < 0.28:
        d["Event"], d["TimeControl"] = "Casual Unlimited game", "-"
    elif r < 0.33:
        del d["TimeControl"]
        d["Site"] = "Hastings ENG"
        d["Round"] = f"{rng.randint(1, 9)}.{rng.randint(1, 20)}"
    if rng.random() < 0.1:
        d["WhiteTitle"] = "BOT"
    if rng.random() < 0.05:
        d["BlackElo"] = "?"
    if rng.random() < 0.1:
        d["Termination"] = rng.choice(_EXTRA_TERMINATIONS)
    if rng.random() < 0.05:
        del d["Termination"]
    if rng.random() < 0.1:
        d["WhiteFideId"] = rng.choice(["0", "", str(rng.randint(100000, 99999999))])
        d["BlackFideId"] = str(rng.randint(100000, 99999999))
    if rng.random() < 0.05:
        del d["UTCDate"]
        del d["UTCTime"]
    if rng.random() < 0.03:
        d["GameId"] = "g" + str(rng.randint(0, 10**12))
    return list(d.items())


# --- a platform's month, streamed --------------------------------------------------------------

LICHESS_MONTH_VERSION = 1
"""Bumped whenever `LichessMonth` writes different bytes for the same arguments (the scale
benchmark keys its cached files by it)."""

# Lichess's categories by estimated duration (base + 40 x increment): bullet < 179 s, blitz
# < 479 s, rapid < 1,499 s, classical above; with each control's share of a month's games.
_MONTH_CONTROLS = (
    ("60+0", 60, 0, "Bullet", 0.17),
    ("180+0", 180, 0, "Blitz", 0.24),
    ("180+2", 180, 2, "Blitz", 0.14),
    ("300+3", 300, 3, "Blitz", 0.17),
    ("600+0", 600, 0, "Rapid", 0.18),
    ("900+10", 900, 10, "Rapid", 0.07),
    ("1800+0", 1800, 0, "Classical", 0.03),
)
_MONTH_RESULTS = (("1-0", 0.50), ("0-1", 0.46), ("1/2-1/2", 0.04))
_MONTH_TERMINATIONS = (("Normal", 0.66), ("Time forfeit", 0.337), ("Abandoned", 0.003))
_MONTH_OPENINGS = (
    *_OPENINGS,
    ("B01", "Scandinavian Defense"),
    ("C50", "Italian Game"),
    ("B20", "Sicilian Defense"),
    ("D00", "Queen's Pawn Game"),
    ("C00", "French Defense"),
    ("A40", "Horwitz Defense"),
)
_NAME_STEMS = (
    "knight", "Pawn", "rook_", "Bishop", "queen", "tactic", "Blitz", "endgame",
    "gambit_", "Zug", "castle", "fianchetto", "Mate", "sac", "Opp", "elo",
)  # fmt: skip
_MONTH_BLOCK = 8_192  # games drawn and written at a time
_CLOCK_VARIANTS = 4  # clock sequences per game body and time control
_ACTIVITY_SIGMA = 1.3
"""Players' activity is log-normal: the median player plays a third of the mean, the busiest of
1M players about 200 times the mean (at 30M games, some 12,000 games in the month)."""


def _lichess_clock(seconds: int) -> str:
    return f"{{ [%clk {seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}] }}"


def _clocked_movetexts(bodies: list[Body], rng: random.Random, variants: int) -> list[str]:
    """Each body's movetext with Lichess clock comments, for each time control, `variants` times:
    every side starts on the base time and loses a random thinking time, plus the increment,
    per move. Index: (body x controls + control) x variants + variant."""
    out = []
    for body in bodies:
        moves = [body.tokens[k : k + 2] for k in range(0, len(body.tokens), 3)]  # number, SAN
        for _, base, inc, _, _ in _MONTH_CONTROLS:
            mean = 1.4 * base / max(len(moves), 1)  # most games use about 70 % of the time
            for _ in range(variants):
                clocks = [base, base]
                parts = []
                for ply, (number, san) in enumerate(moves):
                    side = ply % 2
                    if ply >= 2:
                        think = int(rng.expovariate(1 / mean)) if mean > 0 else 0
                        clocks[side] = max(1, clocks[side] - think + inc)
                    parts += [number, san, _lichess_clock(clocks[side])]
                out.append(" ".join(parts))
    return out


def _month_bounds(month: str) -> tuple[datetime, int]:
    year, number = (int(part) for part in month.split("-"))
    start = datetime(year, number, 1)
    end = _month_starts(start, 1)[1]
    return start, int((end - start).total_seconds())


class LichessMonth:
    """One month of Lichess-sized games (about 2 KB of text each, clocks in the movetext, as in
    Lichess's monthly dumps), produced a block of games at a time so that any number of them
    can be streamed into a file in bounded memory.

    Deterministic by `seed`: each block draws from its own generator seeded by (seed, block),
    so the same arguments always give the same bytes. Players are drawn from `n_players` ids
    with a skewed (log-normal) activity; games are in the order they were played, give or take
    ten minutes, over the whole month; Site ids are unique (a bijection of the game's number).
    `first_game` is the month's first game (the earliest UTC time, then the smallest id) among
    the blocks produced so far.
    """

    def __init__(
        self,
        n_games: int,
        *,
        seed: int = 0,
        n_players: int = 1_000_000,
        month: str = "2024-01",
        n_bodies: int = 500,
        min_plies: int = 36,
        max_plies: int = 84,
    ) -> None:
        if n_players < 2:
            raise ValueError(f"a game needs two players, not n_players={n_players}")
        if n_games * _ID_STEP >= 2**63:
            raise ValueError(f"at most {2**63 // _ID_STEP:,} games, not {n_games:,}")
        self.n_games = n_games
        self.n_players = n_players
        self.seed = seed
        self.start, self.seconds = _month_bounds(month)
        rng = random.Random(seed)
        bodies = make_bodies(n_bodies, seed, min_plies=min_plies, max_plies=max_plies)
        self._movetexts = _clocked_movetexts(bodies, rng, _CLOCK_VARIANTS)
        people = np.random.default_rng([seed, 2**32])
        activity = people.lognormal(0.0, _ACTIVITY_SIGMA, n_players)
        self._cdf = np.cumsum(activity / activity.sum())
        self._strength = np.clip(people.normal(1550, 350, n_players), 600, 3200).astype(np.int64)
        self._days = [
            (self.start + timedelta(days=d)).strftime("%Y.%m.%d")
            for d in range(self.seconds // 86400 + 1)
        ]
        self.first_game: tuple[datetime, str] | None = None

    @property
    def blocks_count(self) -> int:
        return -(-self.n_games // _MONTH_BLOCK)

    def blocks(self) -> Iterator[bytes]:
        """The month's PGN text (UTF-8), a block of games at a time."""
        for block in range(self.blocks_count):
            yield self.block(block)

    def name(self, player: int) -> str:
        """Player `player`'s Lichess-style user name."""
        return f"{_NAME_STEMS[player % len(_NAME_STEMS)]}{player}"

    def block(self, block: int) -> bytes:
        """Block number `block` (from 0) of the month's games."""
        first = block * _MONTH_BLOCK
        size = min(_MONTH_BLOCK, self.n_games - first)
        if size <= 0:
            return b""
        rng = np.random.default_rng([self.seed, block])
        index = np.arange(first, first + size, dtype=np.int64)
        # players: two different ones, drawn by activity
        white = np.minimum(np.searchsorted(self._cdf, rng.random(size)), self.n_players - 1)
        black = np.minimum(np.searchsorted(self._cdf, rng.random(size)), self.n_players - 1)
        black = np.where(black == white, (black + 1) % self.n_players, black)
        # when: in playing order over the month, started up to ten minutes before the slot
        slot = index * self.seconds // max(self.n_games, 1)
        when = np.maximum(slot - rng.integers(0, 600, size), 0)
        ids = _game_ids(index)
        control = _choice(rng, [c[4] for c in _MONTH_CONTROLS], size)
        result = _choice(rng, [r[1] for r in _MONTH_RESULTS], size)
        termination = _choice(rng, [t[1] for t in _MONTH_TERMINATIONS], size)
        opening = rng.integers(0, len(_MONTH_OPENINGS), size)
        body = rng.integers(
            0, len(self._movetexts) // (_CLOCK_VARIANTS * len(_MONTH_CONTROLS)), size
        )
        variant = rng.integers(0, _CLOCK_VARIANTS, size)
        movetext = (body * len(_MONTH_CONTROLS) + control) * _CLOCK_VARIANTS + variant
        white_elo = self._strength[white] + rng.integers(-40, 41, size)
        black_elo = self._strength[black] + rng.integers(-40, 41, size)
        diff = rng.integers(1, 12, size)
        sign = np.select([result == 0, result == 1], [1, -1], 0)
        white_diff = np.where(sign == 0, diff // 4, sign * diff)
        black_diff = np.where(sign == 0, -(diff // 4), -sign * diff)

        earliest = int(when.min())
        ids_at = [ids[k] for k in np.flatnonzero(when == earliest)]
        candidate = (self.start + timedelta(seconds=earliest), min(ids_at))
        if self.first_game is None or candidate < self.first_game:
            self.first_game = candidate

        parts = []
        texts, days = self._movetexts, self._days
        for k in range(size):
            t = int(when[k])
            c = _MONTH_CONTROLS[control[k]]
            res = _MONTH_RESULTS[result[k]][0]
            eco, opening_name = _MONTH_OPENINGS[opening[k]]
            day = days[t // 86400]
            parts.append(
                f'[Event "Rated {c[3]} game"]\n'
                f'[Site "https://lichess.org/{ids[k]}"]\n'
                f'[Date "{day}"]\n'
                '[Round "-"]\n'
                f'[White "{self.name(int(white[k]))}"]\n'
                f'[Black "{self.name(int(black[k]))}"]\n'
                f'[Result "{res}"]\n'
                f'[UTCDate "{day}"]\n'
                f'[UTCTime "{t // 3600 % 24:02d}:{t // 60 % 60:02d}:{t % 60:02d}"]\n'
                f'[WhiteElo "{white_elo[k]}"]\n'
                f'[BlackElo "{black_elo[k]}"]\n'
                f'[WhiteRatingDiff "{white_diff[k]:+d}"]\n'
                f'[BlackRatingDiff "{black_diff[k]:+d}"]\n'
                f'[ECO "{eco}"]\n'
                f'[Opening "{opening_name}"]\n'
                f'[TimeControl "{c[0]}"]\n'
                f'[Termination "{_MONTH_TERMINATIONS[termination[k]][0]}"]\n'
                "\n"
                f"{texts[movetext[k]]} {res}\n\n"
            )
        return "".join(parts).encode("utf-8")


def _choice(rng: np.random.Generator, shares: list[float], size: int) -> np.ndarray:
    """`size` indexes into `shares` (which need not sum to 1 exactly), drawn by share."""
    cdf = np.cumsum(shares)
    return np.minimum(
        np.searchsorted(cdf / cdf[-1], rng.random(size), side="right"), len(shares) - 1
    )


_ALPHABET_CODES = np.frombuffer(_ALPHABET.encode("ascii"), dtype=np.uint8)


def _game_ids(index: np.ndarray) -> list[str]:
    """The 8-character ids of games number `index`: the same bijection as `_Draw.game_id`."""
    code = (index.astype(np.int64) * _ID_STEP + 12_345_678_901) % _ID_SPACE
    chars = np.empty((len(index), 8), dtype=np.uint8)
    for digit in range(8):
        code, rest = np.divmod(code, len(_ALPHABET))
        chars[:, digit] = _ALPHABET_CODES[rest]
    text = chars.tobytes().decode("ascii")
    return [text[k : k + 8] for k in range(0, len(text), 8)]
