"""The PGN byte scanner (numba): one pass over a file's bytes, no Python per game or line.

`_scan` reads whole games from a byte range: per game its first line, the needed tag values
(written straight as Arrow string views, so Polars takes them without a copy), its main-line
plies and its defects. `scan_chunks` cuts a buffer at game boundaries and scans the pieces on
all CPUs (the kernel releases the GIL). `pgn_frames` turns the result into rows.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numba as nb
import numpy as np
from numba import types

from rating_core.kernels.intrinsics import available_cpus, load8

# python-chess's own tag and move patterns (chess.pgn.TAG_REGEX, MOVETEXT_REGEX), so that both
# paths agree on what a tag line and a move token are.
TAG_PATTERN = r'^\[([A-Za-z0-9][A-Za-z0-9_+#=:-]*)\s+"([^\r]*)"\]\s*$'
MOVE_PATTERN = (
    r"[NBKRQ]?[a-h]?[1-8]?[\-x]?[a-h][1-8](?:=?[nbrqkNBRQK])?"
    r"|[PNBRQK]?@[a-h][1-8]|--|Z0|0000|@@@@|O-O(?:-O)?|0-0(?:-0)?"
)
# a movetext's last token that is a move, a move number or a NAG: a game cut there is truncated
LAST_MOVE_PATTERN = rf"^(?:\d+\.+)?(?:{MOVE_PATTERN})[+#!?]*$|^\d+\.*$|^\$\d+$"
URL_PATTERN = r"^https?://"
URL_ID_PATTERN = r"^https?://[^?#]*/([^/?#]+)/?(?:[?#].*)?$"

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
    "Variant",
    "FEN",
    "SetUp",
)
VALUE_MAX = 200  # quarantine values are cut to this many characters
PARALLEL_MIN_BYTES = 1 << 24  # below 16 MB one thread is faster than starting several

# --- the byte scanner (numba): one pass over the file, no Python per game or line -----------------

# rows of the per-game `info` array returned by _scan (one row per field, one column per game)
FIRST_LINE, PLIES, HAS_RESULT, HAS_MT, BADTAG_LINE, SITE_URL = range(6)
# the date and time tags read by the scanner (see `_date_code`, `_time_code`)
UTC_DATE, DATE, EVENT_DATE, UTC_TIME = range(6, 10)
N_INFO = 10
DATE_ROWS = {"UTCDate": UTC_DATE, "Date": DATE, "EventDate": EVENT_DATE, "UTCTime": UTC_TIME}
ABSENT, HAS_QUESTION_MARK, OTHER_FORM = -1, -2, -3  # codes of a date or time tag's value
DAY_BASE = 1 << 32  # a real date YYYY.MM.DD is coded as DAY_BASE + days since 1970-01-01
N_TAGS = len(TAGS)
# string columns written by _scan as Arrow string views: TAGS, then these four
COL_MT, COL_BADTAG, COL_URL_ID, COL_MT_LAST = range(N_TAGS, N_TAGS + 4)
STRING_COLUMNS = (*TAGS, "mt", "bad_tag", "url_id", "mt_last")
LAST_TOKEN_MAX = 40  # bytes of the last movetext token kept for the quarantine
N_COLS = len(STRING_COLUMNS)
SITE = TAGS.index("Site")
TAG_UTC_DATE, TAG_DATE = TAGS.index("UTCDate"), TAGS.index("Date")
TAG_EVENT_DATE, TAG_UTC_TIME = TAGS.index("EventDate"), TAGS.index("UTCTime")
TAG_NAMES = np.zeros((N_TAGS, max(len(t) for t in TAGS)), dtype=np.uint8)
for _k, _t in enumerate(TAGS):
    TAG_NAMES[_k, : len(_t)] = np.frombuffer(_t.encode(), dtype=np.uint8)
TAG_LENS = np.array([len(t) for t in TAGS], dtype=np.int64)
CHUNK_MAX = (1 << 30) - 1  # a chunk copies at most twice its size into its string data (< 2 GiB)
# letters that start most SAN moves (files and pieces): a fast path of the scanner
_SAN_LETTER = np.zeros(256, dtype=np.bool_)
for _ch in "abcdefghNBRQK":
    _SAN_LETTER[ord(_ch)] = True
# flags of a byte in a tag line: 1 newline, 2 non-ASCII, 4 carriage return
_LINE_FLAGS = np.zeros(256, dtype=np.uint8)
_LINE_FLAGS[10] = 1
_LINE_FLAGS[0x80:] = 2
_LINE_FLAGS[13] = 4
# tag name -> index in TAGS through a small collision-free hash table (-1: not a needed tag)
_HASH_SIZE = 512


def _tag_hash(name: bytes) -> int:
    """Hash of a tag name, the same as `_tag_index` in the scanner."""
    ln = len(name)
    return (ln * 61 + name[0] * 7 + name[ln - 1] * 13 + name[ln // 2] * 3) & (_HASH_SIZE - 1)


TAG_TABLE = np.full(_HASH_SIZE, -1, dtype=np.int64)
for _k, _t in enumerate(TAGS):
    _h = _tag_hash(_t.encode())
    assert TAG_TABLE[_h] < 0, f"tag hash collision for {_t}"
    TAG_TABLE[_h] = _k


# Eight bytes at a time where it pays most: a Lichess clock comment `{ [%clk 0:05:00] }`, most
# of a Lichess movetext's bytes, is skipped in three 8-byte reads (`_clock_at`), a tag line is
# searched for its end a word at a time (`_line_scan`), and a string view is built from two
# reads (`_view_words`).
_CLOCK_HEAD = np.frombuffer(b"{ [%clk ", dtype="<u8")[0]
_CLOCK_TAIL = np.uint64(int.from_bytes(b" }", "little"))
_LOW2 = np.uint64(0xFFFF)
_ONES = np.uint64(0x0101010101010101)  # a byte repeated in every lane, the lanes' high bits
_HIGH = np.uint64(0x8080808080808080)
_NL8 = _ONES * np.uint64(10)
_BRACE8 = _ONES * np.uint64(125)
_CR8 = _ONES * np.uint64(13)
_LOW_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def _one_copy(**options: Any) -> Any:
    """`nb.njit(**options)` compiling one copy of a helper per argument *type*.

    Called from a kernel with a constant argument, numba first compiles a copy specialised to
    that constant (`_write_view` had ten copies); each copy costs compile time on a first run
    and gains nothing measurable. The wrapped dispatcher drops the literal types before
    compiling, and numba's typing then uses the general copy for every call.
    """

    def wrap(func: Any) -> Any:
        dispatcher = nb.njit(**options)(func)
        compile_typed = dispatcher.compile

        def compile_general(sig: Any) -> Any:
            if isinstance(sig, tuple):
                sig = tuple(types.unliteral(t) for t in sig)
            return compile_typed(sig)

        dispatcher.compile = compile_general
        return dispatcher

    return wrap


_helper = _one_copy(cache=True)
"""For the helpers that create an array (`_more_data`, `_grow`)."""


# Every other helper is compiled without numba's reference counting (`_nrt=False`, an option
# numba's own library uses): otherwise every call increments and decrements each array argument's
# count atomically, which cost about as much as the scanning itself (the move, clock and tag-line
# helpers, called per token, still spent a third of the scan on it: 3.4 -> 2.2 s CPU on one
# thread for 1M games).
_no_refcount = _one_copy(cache=True, _nrt=False)


@_no_refcount
def _clock_at(buf: np.ndarray, i: int, n: int) -> bool:
    """True when a Lichess clock comment `{ [%clk H:MM:SS] }` (18 bytes) starts at `i`: `{ [%clk `,
    then 8 bytes none of which ends a comment (`}`, newline, non-ASCII), then ` }`."""
    if i + 24 > n or load8(buf, i) != _CLOCK_HEAD:
        return False
    w = load8(buf, i + 8)
    x = w ^ _BRACE8
    y = w ^ _NL8
    if (((x - _ONES) & ~x) | ((y - _ONES) & ~y) | w) & _HIGH:  # a `}`, newline or high byte
        return False
    return (load8(buf, i + 16) & _LOW2) == _CLOCK_TAIL


@_no_refcount
def _is_ws(b: int) -> bool:
    """Whitespace other than the newline (space, tab, CR, VT, FF)."""
    return b == 32 or b == 9 or b == 13 or b == 11 or b == 12


@_no_refcount
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


@_no_refcount
def _is_utf8(buf: np.ndarray, s: int, e: int, n: int) -> bool:
    """True when buf[s:e] is valid UTF-8."""
    k = s
    while k < e:
        if buf[k] < 0x80:
            k += 1
            continue
        ln = _utf8_len(buf, k, n)
        if ln == 0:
            return False
        k += ln
    return True


@_no_refcount
def _file(buf: np.ndarray, j: int, end: int) -> bool:
    return j < end and 97 <= buf[j] <= 104


@_no_refcount
def _rank(buf: np.ndarray, j: int, end: int) -> bool:
    return j < end and 49 <= buf[j] <= 56


# bytes that can start a move token of MOVE_PATTERN (SAN, drop, null move, castling)
_MOVE_START = np.zeros(256, dtype=np.bool_)
for _ch in "NBKRQPabcdefgh12345678-x@Z0O":
    _MOVE_START[ord(_ch)] = True


@_no_refcount
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


@_no_refcount
def _san_after_rank(buf: np.ndarray, j: int, end: int) -> int:
    """`[\\-x]?` then the destination square, greedy first as the regex engine tries it."""
    if j < end and (buf[j] == 45 or buf[j] == 120):
        r = _san_tail(buf, j + 1, end)
        if r >= 0:
            return r
    return _san_tail(buf, j, end)


@_no_refcount
def _san_after_file(buf: np.ndarray, j: int, end: int) -> int:
    """`[1-8]?` then the rest of the SAN pattern."""
    if _rank(buf, j, end):
        r = _san_after_rank(buf, j + 1, end)
        if r >= 0:
            return r
    return _san_after_rank(buf, j, end)


@_no_refcount
def _san_after_piece(buf: np.ndarray, j: int, end: int) -> int:
    """`[a-h]?` then the rest of the SAN pattern."""
    if _file(buf, j, end):
        r = _san_after_file(buf, j + 1, end)
        if r >= 0:
            return r
    return _san_after_file(buf, j, end)


@_no_refcount
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
for _ch in "abcdefgh12345678x":  # may follow a piece in a four-byte move (Nbd7, N1d7, Nxd7)
    _SAN_CLASS[ord(_ch)] |= 32
for _ch in "12345678x":  # may follow a file in a four-byte move (exd5, e4d5)
    _SAN_CLASS[ord(_ch)] |= 64


def _shape(*classes: tuple[int, int]) -> tuple[int, int]:
    """(mask, want) of a move shape over the packed classes of its bytes: (need, forbid) per
    byte; the shape holds where (packed & mask) == want."""
    mask = want = 0
    for k, (need, forbid) in enumerate(classes):
        mask |= (need | forbid) << (8 * k)
        want |= need << (8 * k)
    return mask, want


_TWO = _shape((1, 0), (2, 0), (0, 16))  # e4 then nothing that extends it
_THREE = _shape((4, 0), (1, 0), (2, 0), (0, 16))  # Nf3
_FOUR_PIECE = _shape((4, 0), (32, 0), (1, 0), (2, 0), (0, 16))  # Nbd7, N1d7, Nxd7
_FOUR_PAWN = _shape((1, 0), (64, 0), (1, 0), (2, 0), (0, 16))  # exd5, e4d5


@_no_refcount
def _common_move(buf: np.ndarray, i: int, end: int, cls: np.ndarray) -> int:
    """Length of the move at `i` when it has one of the usual SAN shapes (e4, Nf3, exd5, Nxe5,
    Nbd7, R1e2) and nothing after it could extend python-chess's match; 0 otherwise (then
    `_match_move` decides).

    The bytes' classes are packed in one integer and each shape is one mask test; the shapes
    exclude each other, so their lengths are added without a branch per shape (the shape of the
    next move is not predictable, a mispredicted branch costs more than the sum).
    """
    if i + 5 > end:
        return 0
    k = (
        np.int64(cls[buf[i]])
        | (np.int64(cls[buf[i + 1]]) << 8)
        | (np.int64(cls[buf[i + 2]]) << 16)
        | (np.int64(cls[buf[i + 3]]) << 24)
        | (np.int64(cls[buf[i + 4]]) << 32)
    )
    two = (k & _TWO[0]) == _TWO[1]
    three = (k & _THREE[0]) == _THREE[1]
    four = ((k & _FOUR_PIECE[0]) == _FOUR_PIECE[1]) | ((k & _FOUR_PAWN[0]) == _FOUR_PAWN[1])
    return int(2 * np.int64(two) + 3 * np.int64(three) + 4 * np.int64(four))


@_no_refcount
def _match_move_fast(buf: np.ndarray, i: int, end: int, cls: np.ndarray) -> int:
    """`_match_move`, through `_common_move` for the usual shapes."""
    ln = _common_move(buf, i, end, cls)
    return ln if ln > 0 else _match_move(buf, i, end)


@_no_refcount
def _main_line(
    buf: np.ndarray, i: int, n: int, plies: int, last_end: int, mt_s: int
) -> tuple[int, int, int, int, bool]:
    """Scan main-line movetext (outside comments and variations) from `i` while it holds only
    the common tokens: spaces, move numbers, moves, `+#!?` and one-line `{...}` comments.

    Returns at the first byte it leaves to the scanner's general loop (newline, variation,
    NAG, result, non-ASCII, a move of an uncommon shape...), with the updated plies, end of
    the last token, movetext start and whether it stopped inside a comment. A small function
    with few live values, so that the compiler keeps them in registers: this loop is where most
    of the time goes.
    """
    while i < n:
        b = buf[i]
        if b == 32:
            i += 1
        elif b == 123:  # {: a clock in three reads, else byte by byte
            if mt_s < 0:
                mt_s = i
            if _clock_at(buf, i, n):
                i += 18
                continue
            j = i + 1
            while j < n and buf[j] != 125 and buf[j] != 10 and buf[j] < 0x80:
                j += 1
            if j >= n or buf[j] != 125:
                return j, plies, last_end, mt_s, True
            i = j + 1
        elif _SAN_LETTER[b]:
            ln = _common_move(buf, i, n, _SAN_CLASS)
            if ln == 0:  # castling, a promotion, a capture with a disambiguation...
                return i, plies, last_end, mt_s, False
            if mt_s < 0:
                mt_s = i
            plies += 1
            i += ln
            last_end = i
        elif 48 <= b <= 57:  # a move number: digits then dots
            j = i + 1
            while j < n and 48 <= buf[j] <= 57:
                j += 1
            if j >= n or buf[j] != 46:
                return i, plies, last_end, mt_s, False
            if mt_s < 0:
                mt_s = i
            i = j + 1
            while i < n and buf[i] == 46:
                i += 1
            last_end = i
        elif b == 43 or b == 35 or b == 33 or b == 63:  # + # ! ? (never part of a move)
            if mt_s < 0:
                mt_s = i
            i += 1
            last_end = i
        else:
            return i, plies, last_end, mt_s, False
    return i, plies, last_end, mt_s, False


@_no_refcount
def _promo(b: int) -> bool:
    """A promotion piece letter of python-chess's move regex ([nbrqkNBRQK])."""
    return (
        b == 110 or b == 98 or b == 114 or b == 113 or b == 107
        or b == 78 or b == 66 or b == 82 or b == 81 or b == 75
    )  # fmt: skip


@_no_refcount
def _line_end(buf: np.ndarray, i: int, n: int) -> int:
    """Index of the newline ending the line at `i` (or `n`), without a trailing CR."""
    while i < n and buf[i] != 10:
        i += 1
    e = i
    if e > 0 and buf[e - 1] == 13:
        e -= 1
    return e


@_no_refcount
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


@_no_refcount
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


@_no_refcount
def _line_scan(buf: np.ndarray, i: int, n: int, flags: np.ndarray) -> tuple[int, int]:
    """Index of the newline ending the line at `i` (or `n`) and the OR of `_LINE_FLAGS` of its bytes."""
    while i + 8 <= n:  # eight bytes at a time while none is a newline, CR or non-ASCII
        w = load8(buf, i)
        x = w ^ _NL8
        y = w ^ _CR8
        if (((x - _ONES) & ~x) | ((y - _ONES) & ~y) | w) & _HIGH:
            break
        i += 8
    acc = 0
    while i < n:
        f = flags[buf[i]]
        if f & 1:
            break
        acc |= f
        i += 1
    return i, acc


@_no_refcount
def _url_id(buf: np.ndarray, s: int, e: int) -> tuple[bool, int, int]:
    """Whether buf[s:e] matches URL_PATTERN, and the span of URL_ID_PATTERN's group in it ((-1,
    -1): no match): the last non-empty path segment before any `?` or `#`, one trailing `/`
    allowed."""
    p = s + 4
    if p > e or buf[s] != 104 or buf[s + 1] != 116 or buf[s + 2] != 116 or buf[s + 3] != 112:
        return False, -1, -1
    if p < e and buf[p] == 115:  # https
        p += 1
    if p + 3 > e or buf[p] != 58 or buf[p + 1] != 47 or buf[p + 2] != 47:
        return False, -1, -1
    p += 3
    q = p  # the end of `[^?#]*/([^/?#]+)/?`: the first `?` or `#`
    while q < e and buf[q] != 63 and buf[q] != 35:
        q += 1
    ge = q - 1 if q > p and buf[q - 1] == 47 else q
    gs = ge
    while gs > p and buf[gs - 1] != 47:
        gs -= 1
    if gs in (p, ge):  # no `/` after the scheme, or an empty segment
        return True, -1, -1
    return True, gs, ge


@_no_refcount
def _view_words(buf: np.ndarray, s: int, ln: int) -> tuple[np.uint64, np.uint64]:
    """The two words of the Arrow string view of buf[s:s + ln] as if inline: the length, then
    its first 12 bytes (fewer when shorter) zero padded. A view of a longer string keeps the
    first word (length and 4-byte prefix) and replaces the second by the data offset."""
    k = min(ln, 12)
    if s + 16 <= buf.shape[0]:  # two 8-byte reads, the bytes past the string masked off
        x = load8(buf, s)
        y = load8(buf, s + 8)
        w0 = np.uint64(ln) | ((x & _LOW_BYTES[min(k, 4)]) << np.uint64(32))
        w1 = ((x >> np.uint64(32)) | (y << np.uint64(32))) & _LOW_BYTES[max(k - 4, 0)]
        return w0, w1
    w0 = np.uint64(ln)  # near the end of the buffer: byte by byte
    w1 = np.uint64(0)
    for j in range(k):
        b = np.uint64(buf[s + j])
        if j < 4:
            w0 |= b << np.uint64(32 + 8 * j)
        else:
            w1 |= b << np.uint64(8 * (j - 4))
    return w0, w1


@_no_refcount
def _write_view(
    buf: np.ndarray,
    s: int,
    e: int,
    views: np.ndarray,
    valid: np.ndarray,
    c: int,
    g: int,
    data: np.ndarray,
    off: int,
) -> int:
    """Write buf[s:e] as game `g`'s Arrow string view in column `c` (marked valid): inline up to
    12 bytes, else copied to `data` at `off`, which has room for it. Returns the new offset."""
    ln = e - s
    valid[c, g >> 3] |= np.uint8(1 << (g & 7))
    w0, w1 = _view_words(buf, s, ln)
    views[c, g, 0] = w0
    if ln <= 12:
        views[c, g, 1] = w1
        return off
    views[c, g, 1] = np.uint64(off) << np.uint64(32)  # data buffer 0, at `off`
    for j in range(ln):  # a slice assignment could make a temporary copy
        data[off + j] = buf[s + j]
    return off + ln


@_helper
def _more_data(data: np.ndarray, off: int, need: int) -> np.ndarray:
    """`data` (its first `off` bytes) in a buffer with room for `need` more bytes."""
    more = np.empty(max(2 * data.shape[0], off + need), dtype=np.uint8)
    for k in range(off):  # a loop: cheaper to compile than a slice assignment
        more[k] = data[k]
    return more


@_no_refcount
def _put_url_id(
    buf: np.ndarray, vs: int, ve: int, voff: int, views: np.ndarray, valid: np.ndarray, g: int
) -> int:
    """Write game `g`'s `url_id` view from its Site value buf[vs:ve] (copied at `voff` when over
    12 bytes): a view into the Site value, null when there is no id. Returns 1 for a URL."""
    is_url, us, ue = _url_id(buf, vs, ve)
    views[COL_URL_ID, g, 0] = 0
    views[COL_URL_ID, g, 1] = 0
    if us < 0:
        valid[COL_URL_ID, g >> 3] &= np.uint8(255 - (1 << (g & 7)))
    else:
        valid[COL_URL_ID, g >> 3] |= np.uint8(1 << (g & 7))
        w0, w1 = _view_words(buf, us, ue - us)
        views[COL_URL_ID, g, 0] = w0
        views[COL_URL_ID, g, 1] = (
            w1 if ue - us <= 12 else np.uint64(voff + us - vs) << np.uint64(32)
        )
    return 1 if is_url else 0


@_no_refcount
def _digits(buf: np.ndarray, s: int, count: int) -> int | np.int64:
    """The number written by the `count` bytes at `s`, -1 unless they are all digits."""
    v = np.int64(0)
    for j in range(s, s + count):
        d = np.int64(buf[j]) - 48
        if d < 0 or d > 9:
            return -1
        v = v * 10 + d
    return v


@_no_refcount
def _has_question_mark(buf: np.ndarray, s: int, e: int) -> bool:
    """True when buf[s:e] holds a `?` (an incomplete date)."""
    j = s
    while j < e and buf[j] != 63:
        j += 1
    return j < e


@_no_refcount
def _date_code(buf: np.ndarray, s: int, e: int) -> int:
    """Code of a date tag's value buf[s:e]: DAY_BASE + days since 1970-01-01 for a real date
    written YYYY.MM.DD (year 1000 to 9999), HAS_QUESTION_MARK, else OTHER_FORM (then Polars
    parses the file's dates, as for any value this does not vouch for)."""
    if e - s == 10 and buf[s + 4] == 46 and buf[s + 7] == 46:
        y = _digits(buf, s, 4)
        m = _digits(buf, s + 5, 2)
        d = _digits(buf, s + 8, 2)
        if y >= 1000 and 1 <= m <= 12 and d >= 1:
            leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
            month_days = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
            if d <= month_days[m - 1]:
                # days from the civil date (H. Hinnant's algorithm, years from March)
                yy = y - 1 if m <= 2 else y
                era = yy // 400
                yoe = yy - era * 400
                doy = (153 * (m - 3 if m > 2 else m + 9) + 2) // 5 + d - 1
                doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
                return DAY_BASE + era * 146097 + doe - 719468
    return HAS_QUESTION_MARK if _has_question_mark(buf, s, e) else OTHER_FORM


@_no_refcount
def _time_code(buf: np.ndarray, s: int, e: int) -> int:
    """Code of a UTCTime value buf[s:e]: the seconds of the day for HH:MM:SS (00:00:00 to
    23:59:59), else OTHER_FORM."""
    if e - s == 8 and buf[s + 2] == 58 and buf[s + 5] == 58:
        h = _digits(buf, s, 2)
        m = _digits(buf, s + 3, 2)
        sec = _digits(buf, s + 6, 2)
        if 0 <= h <= 23 and 0 <= m <= 59 and 0 <= sec <= 59:
            return h * 3600 + m * 60 + sec
    return OTHER_FORM


@_no_refcount
def _put_tag(
    buf: np.ndarray,
    vs: int,
    ve: int,
    k: int,
    g: int,
    info: np.ndarray,
    views: np.ndarray,
    valid: np.ndarray,
    data: np.ndarray,
    off: int,
) -> int:
    """Record the value buf[vs:ve] of game `g`'s tag TAGS[k]: its string view (`data` has room
    for it), and for Site its URL id, for a date or time tag its code. Returns the new offset in
    `data`."""
    voff = off
    off = _write_view(buf, vs, ve, views, valid, k, g, data, off)
    if k == SITE:
        info[SITE_URL, g] = _put_url_id(buf, vs, ve, voff, views, valid, g)
    elif k == TAG_UTC_DATE:
        info[UTC_DATE, g] = _date_code(buf, vs, ve)
    elif k == TAG_DATE:
        info[DATE, g] = _date_code(buf, vs, ve)
    elif k == TAG_EVENT_DATE:
        info[EVENT_DATE, g] = _date_code(buf, vs, ve)
    elif k == TAG_UTC_TIME:
        info[UTC_TIME, g] = _time_code(buf, vs, ve)
    return off


@_helper
def _grow(
    info: np.ndarray, views: np.ndarray, valid: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The per-game arrays with room for twice as many games.

    Copied element by element: numba compiles a multi-dimensional slice assignment into a lot
    of code (seconds of a first run) for a copy that runs a few times per file."""
    cap = info.shape[1]
    info2 = np.empty((info.shape[0], 2 * cap), dtype=info.dtype)
    views2 = np.empty((views.shape[0], 2 * cap, 2), dtype=views.dtype)
    valid2 = np.zeros((valid.shape[0], 2 * cap // 8 + 1), dtype=valid.dtype)
    for r in range(info.shape[0]):
        for g in range(cap):
            info2[r, g] = info[r, g]
    for c in range(views.shape[0]):
        for g in range(cap):
            views2[c, g, 0] = views[c, g, 0]
            views2[c, g, 1] = views[c, g, 1]
        for k in range(valid.shape[1]):
            valid2[c, k] = valid[c, k]
    return info2, views2, valid2


@_no_refcount
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


@_no_refcount
def _tag_seen(buf: np.ndarray, i: int, n: int, g: int, valid: np.ndarray) -> bool:
    """True when the tag line at `i` names a needed tag that game `g` already has."""
    ne = i + 1  # the end of the name: a space, a newline or a non-ASCII byte
    while ne < n and buf[ne] != 32 and buf[ne] != 10 and buf[ne] < 0x80:
        ne += 1
    if ne <= i + 1 or ne >= n:
        return False
    k = _tag_index(buf, i + 1, ne, TAG_NAMES, TAG_LENS, TAG_TABLE)
    return k >= 0 and (valid[k, g >> 3] >> (g & 7)) & 1 == 1


NOT_UTF8 = -1  # the `stray` _scan returns when its bytes are not UTF-8

# The scanner's state between calls of `_scan_lines` (an int64 array): where it is, the game
# being read, and how much room it asked for.
(S_POS, S_GAME, S_OFF, S_LINE, S_PREV, S_COMMENT, S_DEPTH, S_LAST_END, S_STRAY, S_MT_S) = range(10)
S_PLIES, S_NEED = 10, 11
N_STATE = 12
# what `_scan_lines` stopped for
DONE, MORE_GAMES, MORE_DATA, STOP_NOT_UTF8 = range(4)


@nb.njit(cache=True, nogil=True)
def _scan(
    buf: np.ndarray,
    start: int,
    stop: int,
    names: np.ndarray,
    lens: np.ndarray,
    table: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int]:
    """Scan buf[start:stop] (whole games; its first line counts as line 1) in one pass.

    Returns per game (column g) its `info` (first line, plies, defects found), the Arrow string
    views of its STRING_COLUMNS (`views[c, g]`, bytes over 12 in `data`) and their validity
    bitmaps; also the line of text before the first game (`stray`, 0: none) and the number of the
    line after the last one. Stops with stray NOT_UTF8 at the first byte sequence that is not
    UTF-8 (the caller then reads the file as Windows-1252, which is always valid UTF-8 again).

    The arrays are grown here, between calls of `_scan_lines` (which stops at a line start when
    they are full): an array variable reassigned inside the per-line loop cost two atomic
    reference count updates per array and line, a quarter of the scan.
    """
    cap = max((stop - start) // 512, 64)
    info = np.empty((N_INFO, cap), dtype=np.int64)
    views = np.empty((N_COLS, cap, 2), dtype=np.uint64)
    valid = np.zeros((N_COLS, cap // 8 + 1), dtype=np.uint8)
    data = np.empty(max((stop - start) // 16, 4096), dtype=np.uint8)
    state = np.zeros(N_STATE, dtype=np.int64)
    state[S_POS] = start
    state[S_GAME] = -1
    state[S_LINE] = 1
    while True:
        status = _scan_lines(buf, stop, names, lens, table, info, views, valid, data, state)
        if status == DONE:
            break
        if status == STOP_NOT_UTF8:
            return info[:, :0], views[:, :0], valid[:, :0], data[:0], NOT_UTF8, state[S_LINE]
        if status == MORE_GAMES:
            info, views, valid = _grow(info, views, valid)
        else:
            data = _more_data(data, state[S_OFF], state[S_NEED])
    m = state[S_GAME] + 1
    off = state[S_OFF]
    stray = state[S_STRAY]
    return info[:, :m], views[:, :m], valid[:, : (m + 7) // 8], data[:off], stray, state[S_LINE]


@_no_refcount
def _save(
    state: np.ndarray,
    i: int,
    g: int,
    off: int,
    line_no: int,
    prev_kind: int,
    in_comment: bool,
    depth: int,
    last_end: int,
    stray: int,
    mt_s: int,
    plies: int,
    need: int,
) -> None:
    """Store `_scan_lines`' local state in `state` (see S_POS...)."""
    state[S_POS] = i
    state[S_GAME] = g
    state[S_OFF] = off
    state[S_LINE] = line_no
    state[S_PREV] = prev_kind
    state[S_COMMENT] = 1 if in_comment else 0
    state[S_DEPTH] = depth
    state[S_LAST_END] = last_end
    state[S_STRAY] = stray
    state[S_MT_S] = mt_s
    state[S_PLIES] = plies
    state[S_NEED] = need


@_no_refcount
def _scan_lines(
    buf: np.ndarray,
    n: int,
    names: np.ndarray,
    lens: np.ndarray,
    table: np.ndarray,
    info: np.ndarray,
    views: np.ndarray,
    valid: np.ndarray,
    data: np.ndarray,
    state: np.ndarray,
) -> int:
    """`_scan`'s pass from the position in `state` to `n`, into arrays it never reallocates.

    Returns DONE at the end (the last game closed), STOP_NOT_UTF8, or, at the start of a line
    that would not fit, MORE_GAMES (`info`, `views`, `valid` are full) or MORE_DATA (`data` needs
    `state[S_NEED]` more bytes); `state` then holds where to go on once they have grown.
    """
    i = state[S_POS]
    g = state[S_GAME]
    off = state[S_OFF]
    line_no = state[S_LINE]
    prev_kind = state[S_PREV]  # 0 blank or start, 1 tag line, 2 other, 3 one blank line after tags
    in_comment = state[S_COMMENT] == 1
    depth = state[S_DEPTH]
    last_end = state[S_LAST_END]
    stray = state[S_STRAY]
    mt_s = state[S_MT_S]  # the current game's movetext start and plies, stored when it closes
    plies = state[S_PLIES]
    while i < n:
        ls = i
        c = buf[i]
        if c != 91 or (i + 1 < n and buf[i + 1] == 37) or (in_comment and prev_kind != 0):
            j = i
            while j < n and _is_ws(buf[j]):
                j += 1
            if j >= n or buf[j] == 10:  # blank line
                prev_kind = 3 if prev_kind == 1 else 0
                i = j + 1
                line_no += 1
                continue
        else:  # a tag line
            # one blank line inside the tags (ChessBase) does not end them, as in python-chess,
            # unless the tag after it is one the game already has (a new game after a cut one)
            new_game = prev_kind != 1
            if prev_kind == 3:
                new_game = _tag_seen(buf, i, n, g, valid)
            nl, fl = _line_scan(buf, i, n, _LINE_FLAGS)
            # room for the line's value (or the whole malformed line) and the closed game's
            # movetext, else back to `_scan` to grow the arrays and read this line again
            need = nl - i + (VALUE_MAX + LAST_TOKEN_MAX if new_game and g >= 0 else 0)
            full = new_game and g + 1 >= info.shape[1]
            if full or off + need > data.shape[0]:
                _save(
                    state, i, g, off, line_no, prev_kind, in_comment, depth, last_end, stray,
                    mt_s, plies, need,
                )  # fmt: skip
                return MORE_GAMES if full else MORE_DATA
            if new_game:
                if g >= 0:
                    off = _close_game(buf, info, views, valid, g, mt_s, plies, last_end, data, off)
                g += 1
                info[FIRST_LINE, g] = line_no
                info[BADTAG_LINE, g] = 0
                info[SITE_URL, g] = 0
                for r in range(UTC_DATE, UTC_TIME + 1):
                    info[r, g] = ABSENT
                for k in range(N_COLS):
                    views[k, g, 0] = 0
                    views[k, g, 1] = 0
                in_comment = False
                depth = 0
                last_end = 0
                mt_s = -1
                plies = 0
            e = nl
            if buf[e - 1] == 13:
                e -= 1
            if fl & 2 and not _is_utf8(buf, i, e, n):
                state[S_LINE] = line_no
                return STOP_NOT_UTF8
            ns, ne, vs, ve = _tag(buf, i, e, (fl & 4) != 0)
            k = -1
            if ns < 0:
                if info[BADTAG_LINE, g] == 0:
                    info[BADTAG_LINE, g] = line_no
                    off = _write_view(buf, ls, e, views, valid, COL_BADTAG, g, data, off)
            else:
                k = _tag_index(buf, ns, ne, names, lens, table)
            if k >= 0:
                off = _put_tag(buf, vs, ve, k, g, info, views, valid, data, off)
            prev_kind = 1
            i = nl + 1
            line_no += 1
            continue
        prev_kind = 2
        escape = not in_comment and c == 37  # a `%` escape line
        if escape or g < 0:  # skipped, as text before the first game is (noted as stray)
            if not escape and stray == 0:
                stray = line_no
            e = _line_end(buf, i, n)
            if not _is_utf8(buf, i, e, n):
                state[S_LINE] = line_no
                return STOP_NOT_UTF8
            while i < n and buf[i] != 10:
                i += 1
            i += 1
            line_no += 1
            continue
        while i < n:
            if not in_comment and depth == 0:  # the common tokens in a tight loop of their own
                i, plies, last_end, mt_s, in_comment = _main_line(buf, i, n, plies, last_end, mt_s)
                if i >= n:
                    break
            if in_comment:  # skip the comment body up to `}`, the newline or a non-ASCII byte
                while i < n and buf[i] != 125 and buf[i] != 10 and buf[i] < 0x80:
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
                    if _clock_at(buf, i, n):
                        i += 18
                        continue
                    in_comment = True
                    i += 1
                    continue
                if depth == 0:
                    if _SAN_LETTER[b]:
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
                    if 48 <= b <= 57:  # a move number (digits, dots) never starts a move
                        j = i + 1
                        while j < n and 48 <= buf[j] <= 57:
                            j += 1
                        if j < n and buf[j] == 46:
                            if mt_s < 0:
                                mt_s = i
                            i = j + 1
                            while i < n and buf[i] == 46:
                                i += 1
                            last_end = i
                            continue
                if b == 10:
                    break
            if b >= 0x80:
                ln = _utf8_len(buf, i, n)
                if ln == 0:
                    state[S_LINE] = line_no
                    return STOP_NOT_UTF8
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
            if b == 59:  # ; comment to the end of the line
                e = _line_end(buf, i, n)
                if not _is_utf8(buf, i, e, n):
                    state[S_LINE] = line_no
                    return STOP_NOT_UTF8
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
        if off + VALUE_MAX + LAST_TOKEN_MAX > data.shape[0]:
            _save(
                state, i, g, off, line_no, prev_kind, in_comment, depth, last_end, stray, mt_s,
                plies, VALUE_MAX + LAST_TOKEN_MAX,
            )  # fmt: skip
            return MORE_DATA
        off = _close_game(buf, info, views, valid, g, mt_s, plies, last_end, data, off)
    _save(state, i, g, off, line_no, prev_kind, in_comment, depth, last_end, stray, mt_s, plies, 0)
    return DONE


@_no_refcount
def _close_game(
    buf: np.ndarray,
    info: np.ndarray,
    views: np.ndarray,
    valid: np.ndarray,
    g: int,
    mt_s: int,
    plies: int,
    last_end: int,
    data: np.ndarray,
    off: int,
) -> int:
    """Finish game `g`: its plies, whether its movetext ends with a result, and (only when it
    does not: the quarantine shows it) the first VALUE_MAX bytes of its movetext and its last
    token (`data` has room for them). Returns the new offset in `data`."""
    info[PLIES, g] = plies
    has_result = mt_s >= 0 and _ends_with_result(buf, mt_s, last_end)
    info[HAS_RESULT, g] = 1 if has_result else 0
    info[HAS_MT, g] = 1 if mt_s >= 0 else 0
    if mt_s >= 0 and not has_result:
        e = max(min(last_end, mt_s + VALUE_MAX), mt_s)  # only a comment: last_end is before it
        while e < last_end and e > mt_s and (buf[e] & 0xC0) == 0x80:
            e -= 1  # never cut a character in two
        off = _write_view(buf, mt_s, e, views, valid, COL_MT, g, data, off)
        t = last_end  # the last token: the quarantine says what stands where the result should
        s = t
        while s > mt_s and buf[s - 1] > 32 and buf[s - 1] not in (40, 41, 123, 125):
            s -= 1
        if s < t:
            s = max(s, t - LAST_TOKEN_MAX)
            while s < t and (buf[s] & 0xC0) == 0x80:
                s += 1  # never cut a character in two
            off = _write_view(buf, s, t, views, valid, COL_MT_LAST, g, data, off)
    return off


@_no_refcount
def _next_game_start(buf: np.ndarray, pos: int, n: int) -> int:
    """Index of the first `[` at or after `pos` that opens a line after a blank line and is not
    `[%`, where the last line before the blank ones is no tag line (a blank line inside the tags
    does not end them): whatever came before, the scanner starts a game there. -1 when there is
    none."""
    i = max(pos, 1)
    while i < n - 1:
        if buf[i] == 91 and buf[i - 1] == 10 and buf[i + 1] != 37:
            j = i - 2
            while j >= 0 and _is_ws(buf[j]):
                j -= 1
            if j < 0:
                return i
            if buf[j] == 10:
                while j >= 0 and (buf[j] == 10 or _is_ws(buf[j])):
                    j -= 1
                while j > 0 and buf[j - 1] != 10:
                    j -= 1  # the start of the last line that is not blank
                if j < 0 or buf[j] != 91 or buf[j + 1] == 37:
                    return i
        i += 1
    return -1


def default_chunks(size: int) -> int:
    """How many pieces to scan a buffer of `size` bytes in: a few per CPU for a big file (so a
    busy core does not hold the others up), one for a small file (threads cost more)."""
    if size < PARALLEL_MIN_BYTES:
        return 1
    return min(available_cpus(), 8) * 2


def _cuts(buf: np.ndarray, start: int, chunks: int) -> list[int]:
    """Chunk boundaries from `start` to the end: about `chunks` pieces (more when a piece would
    pass CHUNK_MAX bytes), each cut at the start of a game (`_next_game_start`)."""
    n = buf.shape[0]
    pieces = max(chunks, -(-(n - start) // CHUNK_MAX), 1)
    cuts = [start]
    for k in range(1, pieces):
        pos = _next_game_start(buf, max(start + (n - start) * k // pieces, cuts[-1] + 1), n)
        if pos < 0:
            break
        cuts.append(pos)
    return [*cuts, n]


Part = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int]


def scan_chunks(buf: np.ndarray, start: int, chunks: int) -> list[Part]:
    """`_scan` of each chunk, in file order, the chunks spread over a thread pool (the scanner
    releases the GIL). Empty when a chunk is not UTF-8."""
    cuts = _cuts(buf, start, chunks)

    def scan(k: int) -> Part:
        return _scan(buf, cuts[k], cuts[k + 1], TAG_NAMES, TAG_LENS, TAG_TABLE)

    if len(cuts) == 2:
        parts = [scan(0)]
    else:
        with ThreadPoolExecutor(min(available_cpus(), len(cuts) - 1)) as pool:
            parts = list(pool.map(scan, range(len(cuts) - 1)))
    if any(p[4] < 0 for p in parts):
        return []
    return parts
