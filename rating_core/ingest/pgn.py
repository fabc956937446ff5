"""PGN reader: vectorized Polars parsing of whole files into raw game rows (DESIGN §2, §4, §8).

The fast path never loops over games or lines in Python: the file becomes a Series of lines, tags
are extracted with regexes and pivoted per game, movetext is joined per game and its main-line
plies counted after stripping comments and variations. `read_pgn_reference` does the same with
python-chess, game by game, and is the oracle of the differential tests.
"""

from __future__ import annotations

import gzip
import mmap
import os
import re
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numba as nb
import numpy as np
import polars as pl
import pyarrow as pa

from rating_core.ingest.common import IngestResult, UnreadableFileError, quarantine_rows
from rating_core.schemas import QUARANTINE_SCHEMA, RAW_GAMES_SCHEMA, conform

# python-chess's own tag and move patterns (chess.pgn.TAG_REGEX, MOVETEXT_REGEX), so that both
# paths agree on what a tag line and a move token are.
TAG_PATTERN = r'^\[([A-Za-z0-9][A-Za-z0-9_+#=:-]*)\s+"([^\r]*)"\]\s*$'
MOVE_PATTERN = (
    r"[NBKRQ]?[a-h]?[1-8]?[\-x]?[a-h][1-8](?:=?[nbrqkNBRQK])?"
    r"|[PNBRQK]?@[a-h][1-8]|--|Z0|0000|@@@@|O-O(?:-O)?|0-0(?:-0)?"
)
URL_PATTERN = r"^https?://"
URL_ID_PATTERN = r"^https?://[^?#]*/([^/?#]+)/?(?:[?#].*)?$"

FINISHED_RESULTS = ("1-0", "0-1", "1/2-1/2")
TERMINATION_MAP = {
    "Normal": "normal",
    "Time forfeit": "timeout",
    "Abandoned": "abandon",
    "Rules infraction": "normal",
    "Unterminated": "unknown",
    **{t: t for t in ("normal", "resign", "timeout", "abandon", "abort", "bot_no_move", "expired")},
    "unknown": "unknown",
}
NO_FIDE_ID = ("", "0", "?", "-")
MISSING_PLAYER = ("", "?")
TAGS = (
    "Event",
    "Site",
    "Date",
    "Round",
    "White",
    "Black",
    "Result",
    "UTCDate",
    "UTCTime",
    "EventDate",
    "WhiteElo",
    "BlackElo",
    "WhiteTitle",
    "BlackTitle",
    "WhiteFideId",
    "BlackFideId",
    "TimeControl",
    "Termination",
    "GameId",
)
VALUE_MAX = 200  # quarantine values are cut to this many characters
BAD_BYTES_MARK = "\ufffd"
PARALLEL_MIN_BYTES = 1 << 24  # below 16 MB one thread is faster than starting several


# --- the byte scanner (numba): one pass over the file, no Python per game or line -----------------

# columns of the per-game `info` array returned by _scan
FIRST_LINE, PLIES, HAS_RESULT, MT_S, MT_E = 0, 1, 2, 3, 4
BADTAG_LINE, BADTAG_S, BADTAG_E, ENC_LINE, ENC_S, ENC_E = 5, 6, 7, 8, 9, 10
N_INFO = 11
N_TAGS = len(TAGS)
TAG_NAMES = np.zeros((N_TAGS, max(len(t) for t in TAGS)), dtype=np.uint8)
for _k, _t in enumerate(TAGS):
    TAG_NAMES[_k, : len(_t)] = np.frombuffer(_t.encode(), dtype=np.uint8)
TAG_LENS = np.array([len(t) for t in TAGS], dtype=np.int64)
# letters that start most SAN moves (files and pieces): a fast path of the scanner
_SAN_LETTER = np.zeros(256, dtype=np.bool_)
for _ch in "abcdefghNBRQK":
    _SAN_LETTER[ord(_ch)] = True
# bytes that end a `{...}` comment body skip: `}`, newline, and any non-ASCII byte (validated)
_COMMENT_STOP = np.zeros(256, dtype=np.bool_)
_COMMENT_STOP[125] = True
_COMMENT_STOP[10] = True
_COMMENT_STOP[0x80:] = True
# flags of a byte in a tag line: 1 newline, 2 non-ASCII, 4 carriage return
_LINE_FLAGS = np.zeros(256, dtype=np.uint8)
_LINE_FLAGS[10] = 1
_LINE_FLAGS[0x80:] = 2
_LINE_FLAGS[13] = 4
# tag name -> index in TAGS through a small collision-free hash table (-1: not a needed tag)
_HASH_SIZE = 512


def _tag_hash(name: bytes) -> int:
    """Hash of a tag name, the same as `_name_hash` in the scanner."""
    ln = len(name)
    return (ln * 61 + name[0] * 7 + name[ln - 1] * 13 + name[ln // 2] * 3) & (_HASH_SIZE - 1)


TAG_TABLE = np.full(_HASH_SIZE, -1, dtype=np.int64)
for _k, _t in enumerate(TAGS):
    _h = _tag_hash(_t.encode())
    assert TAG_TABLE[_h] < 0, f"tag hash collision for {_t}"
    TAG_TABLE[_h] = _k


@nb.njit(cache=True, inline="always")
def _is_ws(b: int) -> bool:
    """Whitespace other than the newline (space, tab, CR, VT, FF)."""
    return b == 32 or b == 9 or b == 13 or b == 11 or b == 12


@nb.njit(cache=True)
def _utf8_len(buf: np.ndarray, i: int, n: int) -> int:
    """Length of the valid UTF-8 sequence starting at `i`, 0 when the bytes are not UTF-8."""
    b0 = buf[i]
    if b0 < 0x80:
        return 1
    lo, hi = 0x80, 0xBF
    if 0xC2 <= b0 <= 0xDF:
        need = 1
    elif b0 == 0xE0:
        need, lo = 2, 0xA0
    elif (0xE1 <= b0 <= 0xEC) or b0 == 0xEE or b0 == 0xEF:
        need = 2
    elif b0 == 0xED:
        need, hi = 2, 0x9F
    elif b0 == 0xF0:
        need, lo = 3, 0x90
    elif 0xF1 <= b0 <= 0xF3:
        need = 3
    elif b0 == 0xF4:
        need, hi = 3, 0x8F
    else:
        return 0
    if i + need > n - 1:
        return 0
    if buf[i + 1] < lo or buf[i + 1] > hi:
        return 0
    for k in range(2, need + 1):
        if buf[i + k] < 0x80 or buf[i + k] > 0xBF:
            return 0
    return need + 1


@nb.njit(cache=True, inline="always")
def _is_fffd(buf: np.ndarray, i: int, n: int) -> bool:
    """True when U+FFFD (the mark of a replaced bad byte) starts at `i`."""
    return i + 2 < n and buf[i] == 0xEF and buf[i + 1] == 0xBF and buf[i + 2] == 0xBD


@nb.njit(cache=True)
def _check_utf8(buf: np.ndarray, s: int, e: int, n: int) -> int:
    """0 when buf[s:e] is valid UTF-8 without U+FFFD, -3 when it holds U+FFFD, -2 when invalid."""
    k = s
    out = 0
    while k < e:
        if buf[k] < 0x80:
            k += 1
            continue
        ln = _utf8_len(buf, k, n)
        if ln == 0:
            return -2
        if _is_fffd(buf, k, n):
            out = -3
        k += ln
    return out


@nb.njit(cache=True, inline="always")
def _file(buf: np.ndarray, j: int, end: int) -> bool:
    return j < end and 97 <= buf[j] <= 104


@nb.njit(cache=True, inline="always")
def _rank(buf: np.ndarray, j: int, end: int) -> bool:
    return j < end and 49 <= buf[j] <= 56


# bytes that can start a move token of MOVE_PATTERN (SAN, drop, null move, castling)
_MOVE_START = np.zeros(256, dtype=np.bool_)
for _ch in "NBKRQPabcdefgh12345678-x@Z0O":
    _MOVE_START[ord(_ch)] = True


@nb.njit(cache=True, inline="always")
def _san_tail(buf: np.ndarray, j: int, end: int) -> int:
    """End of `[a-h][1-8](?:=?[nbrqkNBRQK])?` matched at `j`, or -1."""
    if not (_file(buf, j, end) and _rank(buf, j + 1, end)):
        return -1
    j += 2
    if j + 1 < end and buf[j] == 61 and _promo(buf[j + 1]):
        return j + 2
    if j < end and _promo(buf[j]):
        return j + 1
    return j


@nb.njit(cache=True, inline="always")
def _san_after_rank(buf: np.ndarray, j: int, end: int) -> int:
    """`[\\-x]?` then the destination square, greedy first as the regex engine tries it."""
    if j < end and (buf[j] == 45 or buf[j] == 120):
        r = _san_tail(buf, j + 1, end)
        if r >= 0:
            return r
    return _san_tail(buf, j, end)


@nb.njit(cache=True, inline="always")
def _san_after_file(buf: np.ndarray, j: int, end: int) -> int:
    """`[1-8]?` then the rest of the SAN pattern."""
    if _rank(buf, j, end):
        r = _san_after_rank(buf, j + 1, end)
        if r >= 0:
            return r
    return _san_after_rank(buf, j, end)


@nb.njit(cache=True, inline="always")
def _san_after_piece(buf: np.ndarray, j: int, end: int) -> int:
    """`[a-h]?` then the rest of the SAN pattern."""
    if _file(buf, j, end):
        r = _san_after_file(buf, j + 1, end)
        if r >= 0:
            return r
    return _san_after_file(buf, j, end)


@nb.njit(cache=True)
def _match_move(buf: np.ndarray, i: int, end: int) -> int:
    """Length of python-chess's MOVETEXT_REGEX move alternative matched at `i` (0: no match).

    Tries the optional parts in the regex engine's greedy backtracking order, so that counting
    matches left to right gives the same plies as `chess.pgn` on well-formed movetext.
    """
    c = buf[i]
    if not _MOVE_START[c]:
        return 0
    if c == 78 or c == 66 or c == 75 or c == 82 or c == 81:
        r = _san_after_piece(buf, i + 1, end)
        if r >= 0:
            return r - i
    r = _san_after_piece(buf, i, end)
    if r >= 0:
        return r - i
    # drops: [PNBRQK]?@[a-h][1-8]
    if c == 64 and _file(buf, i + 1, end) and _rank(buf, i + 2, end):
        return 3
    if (
        (c == 80 or c == 78 or c == 66 or c == 82 or c == 81 or c == 75)
        and i + 1 < end
        and buf[i + 1] == 64
        and _file(buf, i + 2, end)
        and _rank(buf, i + 3, end)
    ):
        return 4
    if c == 45 and i + 1 < end and buf[i + 1] == 45:
        return 2
    if c == 90 and i + 1 < end and buf[i + 1] == 48:
        return 2
    if c == 48 and i + 3 < end and buf[i + 1] == 48 and buf[i + 2] == 48 and buf[i + 3] == 48:
        return 4
    if c == 64 and i + 3 < end and buf[i + 1] == 64 and buf[i + 2] == 64 and buf[i + 3] == 64:
        return 4
    if (c == 79 or c == 48) and i + 2 < end and buf[i + 1] == 45 and buf[i + 2] == c:
        # O-O(-O)? and 0-0(-0)?
        if i + 4 < end and buf[i + 3] == 45 and buf[i + 4] == c:
            return 5
        return 3
    return 0


# classes of bytes for the common SAN shapes: 1 file a-h, 2 rank 1-8, 4 piece NBKRQ, 8 `x`, and
# 16 for every byte that the move regex could still consume after a square ([a-h1-8x-=] and the
# promotion letters), so that a shape followed by none of them is the whole regex match
_SAN_CLASS = np.zeros(256, dtype=np.uint8)
for _ch in "abcdefgh":
    _SAN_CLASS[ord(_ch)] |= 1
for _ch in "12345678":
    _SAN_CLASS[ord(_ch)] |= 2
for _ch in "NBKRQ":
    _SAN_CLASS[ord(_ch)] |= 4
_SAN_CLASS[ord("x")] |= 8
for _ch in "abcdefgh12345678x-=nbrqkNBRQK":
    _SAN_CLASS[ord(_ch)] |= 16


@nb.njit(cache=True, inline="always")
def _match_move_fast(buf: np.ndarray, i: int, end: int, cls: np.ndarray) -> int:
    """`_match_move` with shortcuts for the usual SAN shapes (e4, Nf3, exd5, Nxe5, Nbd7, R1e2)
    when nothing after them could extend the match; anything else goes to `_match_move`."""
    if i + 5 <= end:
        c0 = cls[buf[i]]
        c1 = cls[buf[i + 1]]
        c2 = cls[buf[i + 2]]
        if (c0 & 1) and (c1 & 2) and not (c2 & 16):
            return 2
        c3 = cls[buf[i + 3]]
        if (c0 & 4) and (c1 & 1) and (c2 & 2) and not (c3 & 16):
            return 3
        if (
            (((c0 & 4) and (c1 & 11)) or ((c0 & 1) and (c1 & 10)))
            and (c2 & 1)
            and (c3 & 2)
            and not (cls[buf[i + 4]] & 16)
        ):
            return 4
    return _match_move(buf, i, end)


@nb.njit(cache=True, inline="always")
def _promo(b: int) -> bool:
    """A promotion piece letter of python-chess's move regex ([nbrqkNBRQK])."""
    return (
        b == 110 or b == 98 or b == 114 or b == 113 or b == 107
        or b == 78 or b == 66 or b == 82 or b == 81 or b == 75
    )  # fmt: skip


@nb.njit(cache=True)
def _ends_with_result(buf: np.ndarray, s: int, e: int) -> bool:
    """True when buf[s:e] ends with a game termination marker (1-0, 0-1, 1/2-1/2, *)."""
    if e - s >= 1 and buf[e - 1] == 42:
        return True
    if e - s >= 3 and buf[e - 2] == 45:
        a, b = buf[e - 3], buf[e - 1]
        if (a == 49 and b == 48) or (a == 48 and b == 49):
            return True
    if e - s >= 7:
        want = (49, 47, 50, 45, 49, 47, 50)
        ok = True
        for k in range(7):
            ok = ok and buf[e - 7 + k] == want[k]
        return ok
    return False


@nb.njit(cache=True)
def _grow(a: np.ndarray, fill: int) -> np.ndarray:
    """The 2-D array `a` with twice the rows, new rows set to `fill`."""
    b = np.full((a.shape[0] * 2, a.shape[1]), fill, dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@nb.njit(cache=True)
def _line_end(buf: np.ndarray, i: int, n: int) -> int:
    """Index of the newline ending the line at `i` (or `n`), without a trailing CR."""
    while i < n and buf[i] != 10:
        i += 1
    e = i
    if e > 0 and buf[e - 1] == 13:
        e -= 1
    return e


@nb.njit(cache=True)
def _tag(buf: np.ndarray, s: int, e: int, has_cr: bool) -> tuple[int, int, int, int]:
    """Name and value spans of a tag line buf[s:e] per chess.pgn.TAG_REGEX; (-1, ...) if malformed."""
    i = s + 1
    if i >= e:
        return -1, -1, -1, -1
    b = buf[i]
    if not ((48 <= b <= 57) or (65 <= b <= 90) or (97 <= b <= 122)):
        return -1, -1, -1, -1
    ns = i
    while i < e:
        b = buf[i]
        if (48 <= b <= 57) or (65 <= b <= 90) or (97 <= b <= 122) or b in (95, 43, 35, 61, 58, 45):
            i += 1
        else:
            break
    ne = i
    if i >= e or not _is_ws(buf[i]):
        return -1, -1, -1, -1
    while i < e and _is_ws(buf[i]):
        i += 1
    if i >= e or buf[i] != 34:
        return -1, -1, -1, -1
    vs = i + 1
    t = e
    while t > vs and _is_ws(buf[t - 1]):
        t -= 1
    if t - 2 < vs or buf[t - 1] != 93 or buf[t - 2] != 34:
        return -1, -1, -1, -1
    if has_cr:
        for k in range(vs, t - 2):
            if buf[k] == 13:
                return -1, -1, -1, -1
    return ns, ne, vs, t - 2


@nb.njit(cache=True)
def _close_game(buf: np.ndarray, info: np.ndarray, g: int, last_end: int) -> None:
    """Finish game `g`: the end of its movetext value and whether it ends with a result."""
    if info[g, MT_S] >= 0:
        info[g, HAS_RESULT] = 1 if _ends_with_result(buf, info[g, MT_S], last_end) else 0
        e = min(last_end, info[g, MT_S] + VALUE_MAX)
        while e < last_end and e > info[g, MT_S] and (buf[e] & 0xC0) == 0x80:
            e -= 1  # never cut a character in two
        info[g, MT_E] = e


@nb.njit(cache=True, inline="always")
def _tag_index(
    buf: np.ndarray, ns: int, ne: int, names: np.ndarray, lens: np.ndarray, table: np.ndarray
) -> int:
    """Index of the tag name buf[ns:ne] in TAGS, -1 for a tag the reader does not need."""
    ln = ne - ns
    h = (ln * 61 + buf[ns] * 7 + buf[ne - 1] * 13 + buf[ns + ln // 2] * 3) & (table.shape[0] - 1)
    k = table[h]
    if k < 0 or lens[k] != ln:
        return -1
    for j in range(ln):
        if buf[ns + j] != names[k, j]:
            return -1
    return k


@nb.njit(cache=True, inline="always")
def _line_scan(buf: np.ndarray, i: int, n: int, flags: np.ndarray) -> tuple[int, int]:
    """Index of the newline ending the line at `i` (or `n`) and the OR of `_LINE_FLAGS` of its bytes."""
    acc = 0
    while i < n:
        f = flags[buf[i]]
        if f & 1:
            break
        acc |= f
        i += 1
    return i, acc


@nb.njit(cache=True, inline="always")
def _col_span(info: np.ndarray, spans: np.ndarray, g: int, c: int) -> tuple[int, int]:
    """The (start, end) byte span of game `g`'s string column `c`: TAGS, then mt, bad_tag, bad_enc."""
    nt = spans.shape[1] // 2
    if c < nt:
        return spans[g, 2 * c], spans[g, 2 * c + 1]
    if c == nt:
        return info[g, MT_S], info[g, MT_E]
    if c == nt + 1:
        return info[g, BADTAG_S], info[g, BADTAG_E]
    return info[g, ENC_S], info[g, ENC_E]


@nb.njit(cache=True)
def _emit_views(
    buf: np.ndarray,
    info: np.ndarray,
    spans: np.ndarray,
    views: np.ndarray,
    g: int,
    data: np.ndarray,
    off: int,
    bi: int,
) -> int:
    """Write game `g`'s Arrow string views (strings over 12 bytes copied to `data` at `off`, data
    buffer number `bi`); returns the new data offset. Called as a game closes, while its bytes
    are still in cache."""
    for c in range(views.shape[1]):
        s, e = _col_span(info, spans, g, c)
        if s < 0:
            continue
        ln = e - s
        _put_u32(views, g, c, 0, ln)
        if ln <= 12:
            for j in range(ln):
                views[g, c, 4 + j] = buf[s + j]
        else:
            for j in range(4):
                views[g, c, 4 + j] = buf[s + j]
            _put_u32(views, g, c, 8, bi)
            _put_u32(views, g, c, 12, off)
            for j in range(ln):
                data[off + j] = buf[s + j]
            off += ln
    return off


@nb.njit(cache=True)
def _finish_game(
    buf: np.ndarray,
    info: np.ndarray,
    spans: np.ndarray,
    g: int,
    views: np.ndarray,
    data: np.ndarray,
    off: int,
    bi: int,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Write game `g`'s string views, growing `views` and `data` as needed; `off` -1 means the
    data buffer would pass 2 GiB (view offsets are 32-bit) and views are no longer written."""
    if off < 0:
        return views, data, off
    if g >= views.shape[0]:
        bigger = np.zeros((views.shape[0] * 2, views.shape[1], 16), dtype=np.uint8)
        bigger[: views.shape[0]] = views
        views = bigger
    need = 0
    for c in range(views.shape[1]):
        s, e = _col_span(info, spans, g, c)
        if s >= 0 and e - s > 12:
            need += e - s
    if off + need >= 1 << 31:
        return views, data, -1
    if off + need > data.shape[0]:
        more = np.empty(max(2 * data.shape[0], off + need), dtype=np.uint8)
        more[:off] = data[:off]
        data = more
    off = _emit_views(buf, info, spans, views, g, data, off, bi)
    return views, data, off


@nb.njit(cache=True, nogil=True)
def _scan(
    buf: np.ndarray,
    start: int,
    stop: int,
    first_line: int,
    names: np.ndarray,
    lens: np.ndarray,
    table: np.ndarray,
    mark_replacement: bool,
    bi: int,
) -> tuple[np.ndarray, np.ndarray, int, int, np.ndarray, np.ndarray, int]:
    """Scan buf[start:stop] (whole games, `first_line` being its line number): per game its first
    line, needed tag spans, plies and defects; also the line number after the last line, and
    the Arrow string views of the games' string columns (see `_finish_game`; data buffer `bi`).

    With `mark_replacement` False, returns info with -1 rows count (shape (0, N_INFO)) and stray
    = -1 as soon as a byte sequence is not UTF-8; with it True, lines holding U+FFFD are flagged.
    """
    n = stop
    cap = 1024
    info = np.full((cap, N_INFO), -1, dtype=np.int64)
    spans = np.full((cap, 2 * names.shape[0]), -1, dtype=np.int64)
    views = np.zeros((cap, names.shape[0] + 3, 16), dtype=np.uint8)
    data = np.empty((stop - start) // 8 + 1024, dtype=np.uint8)
    off = 0
    g = -1
    i = start
    line_no = first_line
    prev_kind = 0  # 0 blank or start, 1 tag line, 2 other
    in_comment = False
    depth = 0
    last_end = 0
    stray = 0
    mt_s = -1  # the current game's movetext start and plies, stored in `info` when it closes
    plies = 0
    while i < n:
        ls = i
        j = i
        while j < n and _is_ws(buf[j]):
            j += 1
        if j >= n or buf[j] == 10:  # blank line
            prev_kind = 0
            i = j + 1
            line_no += 1
            continue
        c = buf[i]
        is_tag = c == 91 and not (i + 1 < n and buf[i + 1] == 37)
        if is_tag and (not in_comment or prev_kind == 0):
            if prev_kind != 1:  # a new game
                if g >= 0:
                    info[g, MT_S] = mt_s
                    info[g, PLIES] = plies
                    _close_game(buf, info, g, last_end)
                    views, data, off = _finish_game(buf, info, spans, g, views, data, off, bi)
                g += 1
                if g >= info.shape[0]:
                    info = _grow(info, -1)
                    spans = _grow(spans, -1)
                info[g, FIRST_LINE] = line_no
                info[g, PLIES] = 0
                info[g, HAS_RESULT] = 0
                info[g, BADTAG_LINE] = 0
                info[g, ENC_LINE] = 0
                in_comment = False
                depth = 0
                last_end = 0
                mt_s = -1
                plies = 0
            nl, fl = _line_scan(buf, i, n, _LINE_FLAGS)
            e = nl
            if buf[e - 1] == 13:
                e -= 1
            if fl & 2:
                bad = _check_utf8(buf, i, e, n)
                if bad == -2 and not mark_replacement:
                    return info[:0], spans[:0], -1, line_no, views[:0], data[:0], 0
                if bad == -3 and mark_replacement and info[g, ENC_LINE] == 0:
                    info[g, ENC_LINE], info[g, ENC_S], info[g, ENC_E] = line_no, ls, e
            ns, ne, vs, ve = _tag(buf, i, e, (fl & 4) != 0)
            if ns < 0:
                if info[g, BADTAG_LINE] == 0:
                    info[g, BADTAG_LINE], info[g, BADTAG_S], info[g, BADTAG_E] = line_no, ls, e
            else:
                k = _tag_index(buf, ns, ne, names, lens, table)
                if k >= 0:
                    spans[g, 2 * k] = vs
                    spans[g, 2 * k + 1] = ve
            prev_kind = 1
            i = nl + 1
            line_no += 1
            continue
        prev_kind = 2
        if not in_comment and c == 37:  # a `%` escape line
            e = _line_end(buf, i, n)
            if _check_utf8(buf, i, e, n) == -2 and not mark_replacement:
                return info[:0], spans[:0], -1, line_no, views[:0], data[:0], 0
            while i < n and buf[i] != 10:
                i += 1
            i += 1
            line_no += 1
            continue
        if g < 0:  # text before the first game
            if stray == 0:
                stray = line_no
            e = _line_end(buf, i, n)
            if _check_utf8(buf, i, e, n) == -2 and not mark_replacement:
                return info[:0], spans[:0], -1, line_no, views[:0], data[:0], 0
            while i < n and buf[i] != 10:
                i += 1
            i += 1
            line_no += 1
            continue
        while i < n:
            if in_comment:  # skip the comment body up to `}`, the newline or a non-ASCII byte
                while i < n and not _COMMENT_STOP[buf[i]]:
                    i += 1
                if i >= n:
                    break
                b = buf[i]
                if b == 125:
                    in_comment = False
                    i += 1
                    continue
                if b == 10:
                    break
            else:
                # fast paths for the common tokens of a main line: space, comment, move, number
                b = buf[i]
                if b == 32:
                    i += 1
                    continue
                if b == 123:  # {
                    if mt_s < 0:
                        mt_s = i
                    in_comment = True
                    i += 1
                    continue
                if depth == 0 and _SAN_LETTER[b]:
                    if mt_s < 0:
                        mt_s = i
                    ln = _match_move_fast(buf, i, n, _SAN_CLASS)
                    if ln > 0:
                        plies += 1
                        i += ln
                    else:
                        i += 1
                    last_end = i
                    continue
                if b == 10:
                    break
            if b >= 0x80:
                ln = _utf8_len(buf, i, n)
                if ln == 0:
                    if not mark_replacement:
                        return info[:0], spans[:0], -1, line_no, views[:0], data[:0], 0
                    ln = 1
                elif mark_replacement and info[g, ENC_LINE] == 0 and _is_fffd(buf, i, n):
                    info[g, ENC_LINE], info[g, ENC_S] = line_no, ls
                    info[g, ENC_E] = _line_end(buf, ls, n)
                if not in_comment:
                    if mt_s < 0:
                        mt_s = i
                    last_end = i + ln
                i += ln
                continue
            if _is_ws(b):
                i += 1
                continue
            if mt_s < 0:
                mt_s = i
            if b == 123:  # {
                in_comment = True
                i += 1
                continue
            if b == 59:  # ; comment to the end of the line
                e = _line_end(buf, i, n)
                bad = _check_utf8(buf, i, e, n)
                if bad == -2 and not mark_replacement:
                    return info[:0], spans[:0], -1, line_no, views[:0], data[:0], 0
                if bad == -3 and mark_replacement and info[g, ENC_LINE] == 0:
                    info[g, ENC_LINE], info[g, ENC_S], info[g, ENC_E] = line_no, ls, e
                while i < n and buf[i] != 10:
                    i += 1
                continue
            if b == 40:
                depth += 1
            elif b == 41:
                if depth > 0:
                    depth -= 1
            elif b == 46:  # dots of move numbers
                pass
            elif depth == 0:
                if 48 <= b <= 57:  # a move number (digits then a dot) never starts a move
                    j = i
                    while j < n and 48 <= buf[j] <= 57:
                        j += 1
                    if j < n and buf[j] == 46:
                        i = j + 1
                        last_end = i
                        continue
                ln = _match_move(buf, i, n)
                if ln > 0:
                    plies += 1
                    i += ln
                    last_end = i
                    continue
            i += 1
            last_end = i
        i += 1
        line_no += 1
    if g >= 0:
        info[g, MT_S] = mt_s
        info[g, PLIES] = plies
        _close_game(buf, info, g, last_end)
        views, data, off = _finish_game(buf, info, spans, g, views, data, off, bi)
    return info[: g + 1], spans[: g + 1], stray, line_no, views[: g + 1], data[: max(off, 0)], off


@nb.njit(cache=True, inline="always")
def _put_u32(views: np.ndarray, a: int, b: int, at: int, v: int) -> None:
    """Write `v` little-endian as 4 bytes at views[a, b, at:at + 4]."""
    views[a, b, at] = v & 255
    views[a, b, at + 1] = (v >> 8) & 255
    views[a, b, at + 2] = (v >> 16) & 255
    views[a, b, at + 3] = (v >> 24) & 255


@nb.njit(cache=True)
def _gather(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Arrow offsets and data buffers holding the byte spans [start, end) (negative start: empty)."""
    m = starts.shape[0]
    offsets = np.zeros(m + 1, dtype=np.int64)
    for k in range(m):
        ln = ends[k] - starts[k] if starts[k] >= 0 else 0
        offsets[k + 1] = offsets[k] + ln
    data = np.empty(offsets[m], dtype=np.uint8)
    for k in range(m):
        s = starts[k]
        if s >= 0:
            o = offsets[k]
            for j in range(ends[k] - s):
                data[o + j] = buf[s + j]
    return offsets, data


def _read_buffer(path: Path) -> np.ndarray:
    """The file's bytes as a read-only uint8 array: a memory map of a plain file (no copy),
    the decompressed bytes of a `.gz` or `.zst` file."""
    if path.suffix in (".gz", ".zst"):
        return np.frombuffer(_read_bytes(path), dtype=np.uint8)
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size == 0:
                return np.frombuffer(b"", dtype=np.uint8)
            flags = mmap.MAP_PRIVATE | getattr(mmap, "MAP_POPULATE", 0)
            mapped = mmap.mmap(handle.fileno(), size, flags=flags, prot=mmap.PROT_READ)
    except OSError as exc:
        raise UnreadableFileError(f"{path}: cannot read the file ({exc.strerror or exc})") from exc
    return np.frombuffer(mapped, dtype=np.uint8)  # the array keeps the map open


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, decompressed according to its suffix (`.gz`, `.zst`)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UnreadableFileError(f"{path}: cannot read the file ({exc.strerror or exc})") from exc
    try:
        if path.suffix == ".gz":
            return gzip.decompress(raw)
        if path.suffix == ".zst":
            import zstandard

            return zstandard.ZstdDecompressor().decompressobj().decompress(raw)
    except Exception as exc:  # corrupt archive: the whole file is unreadable
        raise UnreadableFileError(f"{path}: cannot decompress ({exc})") from exc
    return raw


def _decode(data: bytes) -> tuple[str, bool]:
    """UTF-8 text of the file and whether it held invalid bytes (then shown as U+FFFD)."""
    try:
        text = data.decode("utf-8")
        bad = False
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        bad = True
    return text.removeprefix("\ufeff"), bad


def _file_stem(source_file: str) -> str:
    """The file name without directories, compression suffix and `.pgn` (for derived game ids)."""
    name = Path(source_file).name
    for suffix in (".gz", ".zst"):
        name = name.removesuffix(suffix)
    return Path(name).stem


def _cut(expr: pl.Expr) -> pl.Expr:
    """A quarantine value no longer than VALUE_MAX characters."""
    return expr.str.slice(0, VALUE_MAX)


def _complete_date(col: str) -> pl.Expr:
    """True where the date tag is present and has no `?`."""
    return pl.col(col).is_not_null() & ~pl.col(col).str.contains("?", literal=True)


def _string_columns(
    buf: np.ndarray, se: np.ndarray, views: np.ndarray | None, datas: list[np.ndarray]
) -> list[pl.Series]:
    """String Series of the byte spans `se` (row: game; columns: start and end of each string
    column, a negative start being null; the bytes are valid UTF-8). Built from the scanner's
    Arrow string views (zero copy into Polars); from the spans when `views` is None."""
    m = se.shape[0]
    shared = [pa.py_buffer(d) for d in datas]
    out = []
    for c in range(se.shape[1] // 2):
        starts = se[:, 2 * c]
        valid = pa.py_buffer(np.packbits(starts >= 0, bitorder="little"))
        if views is not None:
            column = np.ascontiguousarray(views[:, c])
            arr = pa.Array.from_buffers(pa.string_view(), m, [valid, pa.py_buffer(column), *shared])
        else:  # a data buffer would have passed 2 GiB: offsets do not fit a view
            offsets, chars = _gather(buf, starts, se[:, 2 * c + 1])
            arr = pa.LargeStringArray.from_buffers(
                m, pa.py_buffer(offsets), pa.py_buffer(chars), valid
            )
        out.append(pl.Series(pl.from_arrow(arr)))
    return out


@nb.njit(cache=True)
def _next_game_start(buf: np.ndarray, pos: int, n: int) -> int:
    """Index of the first `[` at or after `pos` that follows a blank line and opens a tag line
    (not `[%`): a game boundary for the scanner whatever came before. -1 when there is none."""
    i = max(pos, 2)
    while i < n - 1:
        if buf[i] == 91 and buf[i - 1] == 10 and buf[i - 2] == 10 and buf[i + 1] != 37:
            return i
        i += 1
    return -1


def _scan_parallel(
    buf: np.ndarray, start: int, mark_replacement: bool
) -> tuple[np.ndarray, np.ndarray, int, np.ndarray | None, list[np.ndarray]]:
    """Run `_scan` on one chunk per CPU, cut where a blank line precedes a tag line (a game
    boundary for the scanner), and concatenate the per-game arrays in file order, with line
    numbers made absolute. Returns info, spans, stray, the string views (None if a chunk's
    data buffer overflowed) and the chunks' data buffers."""
    n = buf.shape[0]
    workers = min(os.cpu_count() or 1, 8)
    cuts = [start]
    if n >= PARALLEL_MIN_BYTES and workers >= 2:
        for k in range(1, workers):
            pos = _next_game_start(buf, max(n * k // workers, cuts[-1] + 1), n)
            if pos < 0:
                break
            cuts.append(pos)
    cuts.append(n)

    def scan(k: int) -> tuple[np.ndarray, np.ndarray, int, int, np.ndarray, np.ndarray, int]:
        return _scan(
            buf, cuts[k], cuts[k + 1], 1, TAG_NAMES, TAG_LENS, TAG_TABLE, mark_replacement, k
        )

    if len(cuts) == 2:
        parts = [scan(0)]
    else:
        with ThreadPoolExecutor(len(cuts) - 1) as pool:
            parts = list(pool.map(scan, range(len(cuts) - 1)))
    if any(p[2] < 0 for p in parts):
        return parts[0][0][:0], parts[0][1][:0], -1, None, []
    base = 0
    for info, _, _, end_line, _, _, _ in parts:
        if base:
            info[:, FIRST_LINE] += base
            for col in (BADTAG_LINE, ENC_LINE):
                info[:, col] += np.where(info[:, col] > 0, base, 0)
        base += end_line - 1
    info = np.concatenate([p[0] for p in parts])
    spans = np.concatenate([p[1] for p in parts])
    views = None
    if all(p[6] >= 0 for p in parts):
        views = parts[0][4] if len(parts) == 1 else np.concatenate([p[4] for p in parts])
    return info, spans, parts[0][2], views, [p[5] for p in parts]


def _games_frame(buf: np.ndarray, start: int, mark_replacement: bool) -> tuple[pl.DataFrame, int]:
    """One row per game from the byte scan: first line, needed tags, plies and defects found.

    Also returns the line of the first stray text before the first game (0 when none).
    """
    info, spans, stray, views, datas = _scan_parallel(buf, start, mark_replacement)
    extra = info[:, [MT_S, MT_E, BADTAG_S, BADTAG_E, ENC_S, ENC_E]]
    strings = _string_columns(buf, np.concatenate([spans, extra], axis=1), views, datas)
    cols: dict[str, pl.Series] = {
        "game": pl.Series(np.arange(1, info.shape[0] + 1, dtype=np.int64)),
        "first_line": pl.Series(info[:, FIRST_LINE]),
        "plies": pl.Series(info[:, PLIES].astype(np.int32)),
        "has_result": pl.Series(info[:, HAS_RESULT] == 1),
        "mt": strings[N_TAGS],
        "bad_tag_line": pl.Series(info[:, BADTAG_LINE]),
        "bad_tag": strings[N_TAGS + 1],
        "bad_enc_line": pl.Series(info[:, ENC_LINE]),
        "bad_enc": strings[N_TAGS + 2],
    }
    for k, tag in enumerate(TAGS):
        cols[tag] = strings[k]
    games = pl.DataFrame(cols).with_columns(
        pl.col("bad_tag_line", "bad_enc_line").replace(0, None),
    )
    return games, int(stray)


def _derive(games: pl.DataFrame, source_file: str) -> pl.DataFrame:
    """Map tags to RAW_GAMES_SCHEMA columns and name each game's first defect (`reason`)."""
    stem = _file_stem(source_file)
    c = pl.col
    site_is_url = c("Site").str.contains(URL_PATTERN).fill_null(False)
    url_id = pl.when(site_is_url).then(c("Site").str.extract(URL_ID_PATTERN, 1))
    gid = pl.coalesce(
        pl.when(c("GameId").is_not_null() & (c("GameId") != "")).then(c("GameId")),
        url_id,
        pl.lit(stem + "#") + c("game").cast(pl.String),
    )
    dated = pl.coalesce(
        pl.when(_complete_date("UTCDate")).then(c("UTCDate")),
        pl.when(_complete_date("Date")).then(c("Date")),
        pl.when(_complete_date("EventDate")).then(c("EventDate")),
    )
    time = (
        pl.when(_complete_date("UTCDate") & c("UTCTime").is_not_null())
        .then(c("UTCTime"))
        .otherwise(pl.lit("00:00:00"))
    )
    event = pl.when(c("Event").is_in(["", "?"])).then(None).otherwise(c("Event"))
    site_part = pl.when(~site_is_url & c("Site").is_not_null() & ~c("Site").is_in(["", "?"]))
    tc = c("TimeControl")
    games = games.with_columns(
        gid.alias("game_id"),
        dated.alias("date_used"),
        time.alias("time_used"),
        event.alias("event"),
        (
            dated.str.strptime(pl.Date, "%Y.%m.%d", strict=False).alias("date_parsed")
            if games.height
            else pl.lit(None, pl.Date).alias("date_parsed")
        ),
        (dated + " " + time)
        .str.strptime(pl.Datetime("us"), "%Y.%m.%d %H:%M:%S", strict=False)
        .dt.replace_time_zone("UTC")
        .alias("played_at"),
    ).with_columns(
        pl.concat_str(
            c("event"), site_part.then(pl.lit(" | ") + c("Site")).otherwise(pl.lit(""))
        ).alias("tournament_id"),
        c("Round").str.extract(r"^\s*(\d+)", 1).cast(pl.Int32, strict=False).alias("round"),
        *_player("White", "white"),
        *_player("Black", "black"),
        c("Result").alias("result"),
        tc.alias("time_control"),
        (~c("event").str.contains("Casual", literal=True)).fill_null(True).alias("rated"),
        pl.when(tc == "-")
        .then(
            pl.when(c("event").str.contains("Correspondence", literal=True).fill_null(False))
            .then(pl.lit("correspondence"))
            .otherwise(pl.lit("unlimited"))
        )
        .otherwise(pl.lit("live"))
        .alias("kind"),
        pl.when(c("Termination").is_null())
        .then(pl.lit("normal"))
        .otherwise(c("Termination").replace_strict(TERMINATION_MAP, default="unknown"))
        .alias("termination"),
        c("WhiteElo").str.strip_chars().cast(pl.Int32, strict=False).alias("white_elo"),
        c("BlackElo").str.strip_chars().cast(pl.Int32, strict=False).alias("black_elo"),
        (c("WhiteTitle") == "BOT").fill_null(False).alias("white_is_bot"),
        (c("BlackTitle") == "BOT").fill_null(False).alias("black_is_bot"),
        pl.lit("pgn").alias("format"),
        pl.lit(source_file).alias("source_file"),
        c("first_line").alias("source_line"),
    )
    return games.with_columns(_defect(games))


def _player(tag: str, side: str) -> list[pl.Expr]:
    """Id, name and id-from-name flag of one side: the FIDE id when present, else the name."""
    c = pl.col
    fide = c(f"{tag}FideId")
    has_fide = fide.is_not_null() & ~fide.str.strip_chars().is_in(NO_FIDE_ID)
    return [
        pl.when(has_fide).then(fide.str.strip_chars()).otherwise(c(tag)).alias(f"{side}_id"),
        c(tag).alias(f"{side}_name"),
        (~has_fide).alias(f"{side}_id_from_name"),
    ]


def _defect(games: pl.DataFrame) -> list[pl.Expr]:
    """`q_line`, `q_value`, `q_reason` of each game's first defect, null for a good game."""
    c = pl.col
    missing = lambda tag: c(tag).is_null() | c(tag).is_in(MISSING_PLAYER)  # noqa: E731
    checks: list[tuple[pl.Expr, pl.Expr, pl.Expr, pl.Expr]] = [
        (
            c("bad_enc_line").is_not_null(),
            c("bad_enc_line"),
            _cut(c("bad_enc")),
            pl.lit("line has bytes that are not UTF-8 (shown as \ufffd)"),
        ),
        (
            c("bad_tag_line").is_not_null(),
            c("bad_tag_line"),
            _cut(c("bad_tag")),
            pl.lit('malformed tag line (expected [Name "value"])'),
        ),
        (
            c("mt").is_null() | ~c("has_result").fill_null(False),
            c("first_line"),
            pl.coalesce(c("mt"), pl.lit("")),
            pl.lit("game has tags but its movetext is missing or has no result (truncated?)"),
        ),
        (missing("White"), c("first_line"), c("White"), pl.lit("White player is missing")),
        (missing("Black"), c("first_line"), c("Black"), pl.lit("Black player is missing")),
        (
            ~c("Result").is_in(FINISHED_RESULTS).fill_null(False),
            c("first_line"),
            c("Result"),
            pl.format("result '{}' is not a finished result", c("Result").fill_null("")),
        ),
        (
            c("date_used").is_null(),
            c("first_line"),
            pl.coalesce(c("UTCDate"), c("Date"), c("EventDate")),
            pl.format(
                "date '{}' is incomplete",
                pl.coalesce(c("UTCDate"), c("Date"), c("EventDate"), pl.lit("")),
            ),
        ),
        (
            c("date_parsed").is_null(),
            c("first_line"),
            c("date_used"),
            pl.format("date '{}' is not a real date", c("date_used")),
        ),
        (
            c("played_at").is_null(),
            c("first_line"),
            c("time_used"),
            pl.format("time '{}' is not a valid time of day", c("time_used")),
        ),
    ]
    line = pl.coalesce([pl.when(cond).then(v) for cond, v, _, _ in checks])
    value = pl.coalesce([pl.when(cond).then(v) for cond, _, v, _ in checks])
    reason = pl.coalesce([pl.when(cond).then(r) for cond, _, _, r in checks])
    return [line.alias("q_line"), value.alias("q_value"), reason.alias("q_reason")]


def _split(games: pl.DataFrame, source_file: str) -> IngestResult:
    """Good rows (conformed) and quarantine rows, with duplicate game ids quarantined too."""
    bad = games.filter(pl.col("q_reason").is_not_null())
    good = games.filter(pl.col("q_reason").is_null())
    first_line = pl.col("source_line").first().over("game_id")
    dup = good.with_columns(first_line.alias("dup_of")).filter(
        ~pl.col("game_id").is_first_distinct()
    )
    dup = dup.with_columns(
        pl.col("source_line").alias("q_line"),
        pl.col("game_id").alias("q_value"),
        pl.format(
            "game id '{}' already appears at line {}", pl.col("game_id"), pl.col("dup_of")
        ).alias("q_reason"),
    ).drop("dup_of")
    good = good.filter(pl.col("game_id").is_first_distinct())
    quarantine = (
        pl.concat([bad, dup])
        .sort("q_line")
        .select(
            pl.lit(source_file).alias("source_file"),
            pl.col("q_line").alias("line"),
            pl.col("game_id").alias("record"),
            pl.col("q_value").cast(pl.String).alias("value"),
            pl.col("q_reason").alias("reason"),
        )
    )
    return IngestResult(
        rows=conform(good, RAW_GAMES_SCHEMA),
        quarantine=conform(quarantine, QUARANTINE_SCHEMA),
    )


def read_pgn(path: Path, source_file: str | None = None) -> IngestResult:
    """Read a PGN file (plain, `.gz` or `.zst`) into RAW_GAMES_SCHEMA rows and quarantine rows.

    `source_file` is recorded in every row; it defaults to the path as given. Games with a defect
    go to the quarantine with a reason; the games around them are still returned.
    """
    path = Path(path)
    source = str(path) if source_file is None else source_file
    buf = _read_buffer(path)
    start = 3 if buf[:3].tobytes() == b"\xef\xbb\xbf" else 0
    games, stray = _games_frame(buf, start, False)
    if stray < 0:  # not UTF-8: rescan the repaired text and flag the lines that held bad bytes
        data = buf.tobytes().decode("utf-8", errors="replace").encode("utf-8")
        buf = np.frombuffer(data, dtype=np.uint8)
        games, stray = _games_frame(buf, start, True)
    result = _split(_derive(games, source), source)
    if stray > 0:
        extra = quarantine_rows(
            [
                {
                    "source_file": source,
                    "line": stray,
                    "record": None,
                    "value": "",
                    "reason": "text before the first game's tags is not part of any game",
                }
            ]
        )
        result = IngestResult(rows=result.rows, quarantine=pl.concat([extra, result.quarantine]))
    return result


# --- the python-chess reference ------------------------------------------------------------------


def _ref_complete(value: str | None) -> bool:
    """True when a date tag is present and has no `?` (same rule as the fast path)."""
    return value is not None and "?" not in value


def _ref_row(
    headers: dict[str, str], plies: int, ordinal: int, line: int, stem: str, source: str
) -> dict[str, Any] | None:
    """One RAW_GAMES_SCHEMA row from python-chess headers, or None when the game is rejected."""
    h = headers
    white, black, result = h.get("White"), h.get("Black"), h.get("Result")
    if white in (None, *MISSING_PLAYER) or black in (None, *MISSING_PLAYER):
        return None
    if result not in FINISHED_RESULTS:
        return None
    utc_date = h.get("UTCDate")
    if _ref_complete(utc_date):
        date, time = utc_date, h.get("UTCTime") or "00:00:00"
        if "UTCTime" not in h:
            time = "00:00:00"
    elif _ref_complete(h.get("Date")):
        date, time = h["Date"], "00:00:00"
    elif _ref_complete(h.get("EventDate")):
        date, time = h["EventDate"], "00:00:00"
    else:
        return None
    try:
        played = datetime.strptime(f"{date} {time}", "%Y.%m.%d %H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return None
    site = h.get("Site")
    is_url = site is not None and re.match(URL_PATTERN, site) is not None
    game_id = h.get("GameId") or None
    if game_id is None and is_url:
        m = re.match(URL_ID_PATTERN, site or "")
        game_id = m.group(1) if m else None
    if game_id is None:
        game_id = f"{stem}#{ordinal}"
    event = h.get("Event")
    event = None if event in ("", "?") else event
    tournament = None
    if event is not None:
        tournament = event + (f" | {site}" if site not in (None, "", "?") and not is_url else "")
    rnd = re.match(r"^\s*(\d+)", h.get("Round", ""))
    tc = h.get("TimeControl")
    kind = "live"
    if tc == "-":
        kind = "correspondence" if event and "Correspondence" in event else "unlimited"
    term = h.get("Termination")

    def elo(v: str | None) -> int | None:
        try:
            return int(v.strip()) if v is not None else None
        except ValueError:
            return None

    def side(tag: str) -> tuple[str, bool]:
        fide = h.get(f"{tag}FideId")
        if fide is not None and fide.strip() not in NO_FIDE_ID:
            return fide.strip(), False
        return h[tag], True

    (wid, wfrom), (bid, bfrom) = side("White"), side("Black")
    return {
        "game_id": game_id,
        "source_file": source,
        "source_line": line,
        "format": "pgn",
        "tournament_id": tournament,
        "round": int(rnd.group(1)) if rnd else None,
        "played_at": played,
        "white_id": wid,
        "black_id": bid,
        "white_name": white,
        "black_name": black,
        "white_id_from_name": wfrom,
        "black_id_from_name": bfrom,
        "result": result,
        "time_control": tc,
        "rated": not (event is not None and "Casual" in event),
        "kind": kind,
        "plies": plies,
        "termination": "normal" if term is None else TERMINATION_MAP.get(term, "unknown"),
        "white_elo": elo(h.get("WhiteElo")),
        "black_elo": elo(h.get("BlackElo")),
        "white_is_bot": h.get("WhiteTitle") == "BOT",
        "black_is_bot": h.get("BlackTitle") == "BOT",
        "event": event,
    }


class _LineCounter:
    """A text stream wrapper that counts lines read, so each game's first tag line is known."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.line = 0

    def readline(self) -> str:
        """Read one line and count it."""
        s = self.handle.readline()
        if s:
            self.line += 1
        return s


def read_pgn_reference(path: Path, source_file: str | None = None) -> pl.DataFrame:
    """Slow, obviously-correct reader built on `chess.pgn.read_game`: the differential oracle.

    Applies the same acceptance rules as `read_pgn` (missing players, unfinished result, bad
    date, duplicate id) and returns the accepted games as RAW_GAMES_SCHEMA rows.
    """
    import io

    import chess.pgn

    path = Path(path)
    source = str(path) if source_file is None else source_file
    text, _ = _decode(_read_bytes(path))
    stream = _LineCounter(io.StringIO(text))
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    ordinal = 0
    pending: str | None = None
    while True:
        # find the first tag line of the next game to record its line number
        line = pending if pending is not None else stream.readline()
        pending = None
        while line and not (line.startswith("[") and not line.startswith("[%")):
            line = stream.readline()
        if not line:
            break
        first_line = stream.line
        ordinal += 1
        replay = _Prefixed(line, stream)
        game = chess.pgn.read_game(replay)  # type: ignore[arg-type]
        if game is None:
            break
        headers = {k: v for k, v in game.headers.items()}
        plies = sum(1 for _ in game.mainline_moves())
        row = _ref_row(headers, plies, ordinal, first_line, _file_stem(source), source)
        if row is not None and row["game_id"] not in seen:
            seen.add(row["game_id"])
            rows.append(row)
    if not rows:
        return conform(pl.DataFrame(schema=RAW_GAMES_SCHEMA), RAW_GAMES_SCHEMA)
    frame = pl.DataFrame(rows, schema_overrides={"played_at": pl.Datetime("us", "UTC")})
    return conform(frame, RAW_GAMES_SCHEMA)


class _Prefixed:
    """A stream that yields one already-read line first, then continues from another stream."""

    def __init__(self, first: str, rest: _LineCounter) -> None:
        self.first: str | None = first
        self.rest = rest

    def readline(self) -> str:
        """The pushed-back line, then the underlying stream's lines."""
        if self.first is not None:
            s, self.first = self.first, None
            return s
        return self.rest.readline()
