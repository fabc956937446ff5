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


def make_bodies(n: int, seed: int = 0, *, extras: bool = False) -> list[Body]:
    """`n` distinct game bodies, reproducible from `seed`."""
    rng = random.Random(seed)
    return [make_body(rng, extras=extras) for _ in range(n)]


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
) -> Path:
    """Write `n_games` Lichess-style games to `path` (`.gz` compresses) and return the path.

    `extras` mixes in what the reader must survive: comments with parentheses, nested variations,
    NAGs, BOT titles, casual games, `-` time controls, FIDE ids, wrapped movetext.
    """
    rng = random.Random(seed)
    bodies = make_bodies(min(n_bodies, max(n_games, 1)), seed, extras=extras)
    start = datetime(2024, 1, 1)
    alphabet = string.ascii_letters + string.digits
    opener = gzip.open if path.suffix.lower() == ".gz" else open  # as the reader: any case
    with opener(path, "wb") as out:  # written a block of games at a time: memory stays small
        for first in range(0, n_games, _BLOCK):
            games = range(first, min(first + _BLOCK, n_games))
            text = "".join(_game(i, bodies, rng, start, alphabet, extras) for i in games)
            out.write(text.encode("utf-8"))
    return path


def _game(
    i: int, bodies: list[Body], rng: random.Random, start: datetime, alphabet: str, extras: bool
) -> str:
    """Game number `i` (from 0) of the file, drawing from the file's random stream."""
    body = bodies[i % len(bodies)]
    white, black = rng.sample(_NAMES, 2)
    result = rng.choice(_RESULTS)
    when = start + timedelta(seconds=rng.randrange(0, 2 * 365 * 86400))
    event, tc = "Rated Blitz game", rng.choice(_TIME_CONTROLS)
    termination = rng.choice(_TERMINATIONS)
    tags = [
        ("Event", event),
        ("Site", "https://lichess.org/" + "".join(rng.choices(alphabet, k=8))),
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
