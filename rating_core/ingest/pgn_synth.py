"""Synthetic Lichess-style PGN generator for the ingest benchmark and the differential tests.

A few hundred legal game bodies are played out with python-chess once, then reused under varied
headers, so that hundreds of thousands of realistic games are written in seconds.
"""

from __future__ import annotations

import gzip
import random
import string
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import chess

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
