"""Terminal output shared by the commands: rich tables for people, JSON for machines.

Every string a user provided (file names, ids, names, reasons) is printed as plain text, never as
rich markup, and tables are fitted to the terminal: ids and numbers are never broken, text wraps
at spaces only (each word whole), long file names are shortened in the middle so that each still
names one file only, a table's title is a line of its own (never wrapped inside a name to the
table's width), low-value columns are dropped (with a note) or, when the rest still cannot show
every value whole or every column was asked for, each row is printed as a stack of
`column  value` lines.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import re
import sys
import textwrap
from bisect import bisect_left
from collections.abc import Collection, Iterable, Iterator, Sequence
from itertools import chain, pairwise

from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text


class _Console(Console):
    """rich's Console, leaving a reader that stopped early (`ratings show | head`) to the command
    line's own handling (`app.main`: silence, exit status 141) rather than rich's exit status 1."""

    def on_broken_pipe(self) -> None:
        """rich's hook for a write to a closed pipe: raise it again, as Python's own writes do."""
        self.quiet = True  # nothing more is written to the closed pipe
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))


console = _Console()
err_console = _Console(stderr=True)

ELLIPSIS = "…"
TWO_CUTS_CHECKED = 300
"""A name cut twice is checked against at most this many names alike at both ends (beyond, a
cut at one end, checked at once, is used instead: a long inbox stays quick)."""
LAST = "\U0010ffff"
"""A character after every other: `head + LAST` ends the sorted run of names that begin with head."""
SHORTEST_NAME = 20
"""A shortened file name keeps at least this many characters (head, ellipsis and tail)."""


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, wrapped at spaces only: its default also breaks after a hyphen, cutting
    `fide-xml-combined` or `--as-of` in two at 80 columns. The same two methods argparse's own
    RawTextHelpFormatter overrides."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(
            " ".join(text.split()), width, break_long_words=False, break_on_hyphens=False
        )

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return textwrap.fill(
            " ".join(text.split()),
            width,
            initial_indent=indent,
            subsequent_indent=indent,
            break_long_words=False,
            break_on_hyphens=False,
        )


def span(first: str, last: str) -> str:
    """`2026-01 to 2026-06`, or `2026-01` alone when first and last are the same."""
    return first if first == last else f"{first} to {last}"


def print_json(payload: object) -> None:
    """Print machine-readable output on stdout."""
    sys.stdout.write(json.dumps(payload, indent=2, default=str) + "\n")


def plain(value: object) -> str:
    """`value` as text safe to embed in a rich markup string (`[bold]x.csv` stays literal)."""
    return escape("" if value is None else str(value))


def shorten_middle(text: str, width: int) -> str:
    """`text` cut in the middle to at most `width` characters, keeping both ends.

    `federation/ankara-winter-2026-01.csv` at 27 becomes `federation/an…r-2026-01.csv`: the folder
    and the date/suffix, which tell files apart, survive.
    """
    if cell_len(text) <= width:
        return text
    if width < 3:
        return text[:width]
    tail = (width - 1) // 2
    head = width - 1 - tail
    return text[:head] + ELLIPSIS + text[len(text) - tail :]


def _matches(shown: str, name: str) -> bool:
    """Whether `name` could be what the shortened `shown` (`head…tail`, `head…middle…tail`)
    stands for: its pieces in order, each ellipsis standing for one character or more."""
    pieces = shown.split(ELLIPSIS)
    if not name.startswith(pieces[0]):
        return False
    at = len(pieces[0])
    for piece in pieces[1:-1]:  # the leftmost place leaves the most room for what follows
        found = name.find(piece, at + 1)
        if found < 0:
            return False
        at = found + len(piece)
    return len(name) - len(pieces[-1]) > at and name.endswith(pieces[-1])


def _splits(name: str, width: int) -> list[int]:
    """How many leading characters to keep when `name` is cut to `width`, best first: the whole
    base name after the last `/` kept when the folder can give way (`federation…/ukd-blitz@…`),
    else the middle; then every other cut, nearest first (the longer tail first: it holds the
    date and the extension)."""
    room = width - 1  # characters kept beside the ellipsis
    middle = room - (room // 2)
    preferred = middle
    slash = name.rfind("/")
    if slash > 0 and len(name) - slash <= room - 3:  # at least 3 characters of the folder
        preferred = room - (len(name) - slash)
    return sorted(range(room + 1), key=lambda head: (abs(head - preferred), head > preferred))


def _own_lengths(ordered: Sequence[str]) -> dict[str, int]:
    """For each of the sorted, distinct `ordered`: how many leading characters no other shares
    (one more than the longest common prefix with its neighbours)."""
    common = [len(os.path.commonprefix([a, b])) for a, b in pairwise(ordered)]
    return {
        name: 1 + max(common[i - 1] if i > 0 else 0, common[i] if i < len(common) else 0)
        for i, name in enumerate(ordered)
    }


def _one_cut(name: str, width: int, head: int) -> str:
    """`name` in `width` characters: its first `head`, an ellipsis, and its end."""
    return name[:head] + ELLIPSIS + name[len(name) - (width - 1 - head) :]


def _two_cuts(name: str, width: int, differs: Sequence[int]) -> Iterator[str]:
    """`name` cut twice (`head…middle…tail`) in `width` characters, the middle kept around each
    of `differs` (where it differs from the names most like it), for names that one cut cannot
    tell apart (`clubs/…/group-a-round…-06.csv`, `clubs/…/group-b-round…-06.csv`)."""
    room = width - 2  # characters kept beside the two ellipses
    slash = name.find("/")
    for head, tail in ((room // 4, room // 4), (room // 6, room // 3), (2, room // 6)):
        if slash > 0:
            head = min(head, slash + 1)  # the first folder, when it is short
        head, tail = max(head, 1), max(tail, 1)
        middle = room - head - tail
        last = len(name) - tail - 1  # where the middle piece must end, at the latest
        if middle < 1 or last - (head + 1) < middle:
            continue
        for at in differs:
            start = at - middle // 2
            folder = name.rfind("/", 0, at)  # from the folder's `/` when it is near enough
            if folder >= head + 1 and at - folder < middle:
                start = folder
            start = min(max(start, head + 1), last - middle)
            yield (
                name[:head]
                + ELLIPSIS
                + name[start : start + middle]
                + ELLIPSIS
                + name[len(name) - tail :]
            )


def shorten_names(names: Sequence[str], width: int) -> list[str] | None:
    """Each of `names` in at most `width` characters, a long one cut once (`head…tail`), or twice
    when one cut cannot tell it apart (`head…middle…tail`), where no other of `names` fits the
    same pieces: two files never look alike after shortening. None when `width` is too narrow
    for that (the caller gives the column more room)."""
    if width < 3:
        return None
    others = sorted(set(names))
    backwards = sorted(other[::-1] for other in others)

    def _alike(head: str, tail: str) -> tuple[int, Iterator[str]]:
        """The names that begin with `head` or end with `tail`, whichever are fewer (and how
        many they are)."""
        start, end = bisect_left(others, head), bisect_left(others, head + LAST)
        tail = tail[::-1]
        back, stop = bisect_left(backwards, tail), bisect_left(backwards, tail + LAST)
        if end - start <= stop - back:
            return end - start, (others[i] for i in range(start, end))
        return stop - back, (backwards[i][::-1] for i in range(back, stop))

    own_head = _own_lengths(others)  # a head this long is no other name's: no scan needed
    own_tail = {n[::-1]: length for n, length in _own_lengths(backwards).items()}
    shown: dict[str, str] = {}
    for name in others:
        if cell_len(name) <= width:
            shown[name] = name
            continue
        candidates: Iterable[str]
        if len(name) != cell_len(name):  # wide characters: cut by cells, checked the same way
            candidates = [shorten_middle(name, width)]
        else:
            heads = _splits(name, width)
            side = (width - 1) // 4  # a cut keeping less than this of one end says little
            balanced = [h for h in heads[1:] if side <= h <= width - 1 - side]
            lopsided = [h for h in heads[1:] if not side <= h <= width - 1 - side]
            differs = [own_head[name] - 1, len(name) - own_tail[name]]
            candidates = chain(  # one cut, else two around the difference, else one at an end
                (_one_cut(name, width, head) for head in heads[:1] + balanced),
                _two_cuts(name, width, differs),
                (_one_cut(name, width, head) for head in lopsided),
            )
        for candidate in candidates:
            pieces = candidate.split(ELLIPSIS)
            head, tail = pieces[0], pieces[-1]
            if len(head) >= own_head[name] or len(tail) >= own_tail[name]:
                shown[name] = candidate
                break
            count, alike = _alike(head, tail)
            if len(pieces) > 2 and count > TWO_CUTS_CHECKED:
                continue  # too many names to check a middle piece against: the next cut
            if not any(_matches(candidate, other) for other in alike if other != name):
                shown[name] = candidate
                break
        else:
            return None
    return [shown[name] for name in names]


def _least_unambiguous(names: Sequence[str], start: int, natural: int) -> int:
    """The narrowest width from `start` at which `names` shorten without two looking alike."""
    for width in range(start, natural):
        if shorten_names(names, width) is not None:
            return width
    return natural


def table_width(widths: Sequence[int]) -> int:
    """Characters a rich table with the default box takes for these column contents."""
    return sum(widths) + 3 * len(widths) + 1


def _header_parts(name: str) -> list[str]:
    """`opponent_rating` as `opponent_`, `rating`; `new versions` as `new`, `versions`."""
    return [p for p in re.split(r"(?<=_)| ", name) if p]


def _header(name: str, width: int) -> str:
    """The header `name` in lines of at most `width`, broken after an underscore or at a space
    when it must be (`opponent_` over `rating`), so a column of short values keeps its name."""
    lines: list[str] = []
    for part in _header_parts(name):
        joiner = "" if not lines or lines[-1].endswith("_") else " "
        if lines and cell_len(lines[-1] + joiner + part) <= width:
            lines[-1] += joiner + part
        else:
            lines.append(part)
    return "\n".join(lines)


def _narrowest(name: str, cells: Sequence[str], wrap: bool) -> int:
    """The least width a column can take: its values (a wrapping column: its longest word), and
    the longest piece of its header (`opponent_`)."""
    header = max(cell_len(p) for p in _header_parts(name))
    if not cells:
        return header
    if wrap:
        words = (cell_len(word) for cell in cells for word in cell.split())
        return max(header, *words, 1)
    return max(header, *(cell_len(cell) for cell in cells))


def print_table(
    title: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    wrap: Collection[str] = (),
    shorten: Collection[str] = (),
    drop_order: Sequence[str] = (),
    stack_when_narrow: bool = False,
    hint: str = "--json for every column",
    right: Collection[str] = (),
    out: Console | None = None,
) -> None:
    """Print a table fitted to the terminal width.

    `wrap` columns (names, reasons) wrap at spaces, each word whole; `shorten` columns (file
    names) are cut in the middle, never into two names' look-alikes; every other column is
    printed whole on one line. When the table is too wide, the `drop_order` columns are left out,
    first listed first, and a note says which (`hint` tells how to see them); when it is still too
    wide, or with `stack_when_narrow` (the user asked for every column), rows are stacked.
    """
    out = out or console
    columns = [str(c) for c in columns]
    cells = [["" if v is None else str(v) for v in row] for row in rows]
    width = out.width
    by_column = {name: [row[i] for row in cells] for i, name in enumerate(columns)}
    natural = {
        name: max(cell_len(name), *(cell_len(c) for c in by_column[name]), 1) for name in columns
    }
    least = {  # the least width of each column with its header broken at underscores
        name: (
            _least_unambiguous(
                by_column[name], min(natural[name], SHORTEST_NAME, width), natural[name]
            )
            if name in shorten
            else _narrowest(name, by_column[name], name in wrap)
        )
        for name in columns
    }
    kept = list(columns)
    dropped: list[str] = []
    if stack_when_narrow and table_width([least[c] for c in kept]) > width:
        _print_stacked(title, columns, cells, out)
        return
    for name in drop_order:
        if table_width([least[c] for c in kept]) <= width:
            break
        if name in kept and len(kept) > 1:
            kept.remove(name)
            dropped.append(name)
    if table_width([least[c] for c in kept]) > width and len(kept) > 1:
        _print_stacked(title, columns, cells, out)
        return
    whole_headers = {name: max(least[name], cell_len(name)) for name in kept}
    split = table_width(list(whole_headers.values())) > width  # break headers only if needed
    if not split:
        least = whole_headers
    spare = width - table_width([least[c] for c in kept])
    table = Table()
    for name in kept:
        if name in shorten:
            fitted = min(natural[name], least[name] + max(spare, 0))
            names = shorten_names(by_column[name], fitted)
            while names is None:  # a wider cut can tell fewer apart: back off to what fits
                fitted -= 1
                names = shorten_names(by_column[name], fitted)
            spare -= fitted - least[name]
            by_column[name] = names
        table.add_column(
            _header(name, least[name]) if split else name,
            justify="right" if name in right else "left",
            no_wrap=name not in wrap,
            overflow="fold",
            min_width=least[name] if name in wrap else None,
        )
    for i in range(len(cells)):
        table.add_row(*(Text(by_column[name][i]) for name in kept))
    print_title(title, out)
    out.print(table)
    if dropped:
        out.print(
            Text(f"not shown at {width} columns: {', '.join(dropped)} ({hint})"),
            style="dim",
        )


def print_cause_left_out(out: Console | None = None) -> None:
    """The line under a table of changed players whose `cause` column is left out because every
    row's cause is the version's reason, printed above it: a column is never dropped unsaid."""
    (out or console).print(
        Text("cause not shown: every player's is the reason above (--json shows it)"),
        style="dim",
    )


def print_title(title: str, out: Console | None = None) -> None:
    """A table's title on its own line(s), wrapped at spaces to the terminal (not to the table,
    which can be narrower than a name in the title: `34500012: ukd-standard-tournament_...`)."""
    (out or console).print(Text(title, style="italic"))


def _print_stacked(
    title: str, columns: Sequence[str], cells: Sequence[Sequence[str]], out: Console
) -> None:
    """Each row as `column  value` lines under the title: for every column on a narrow terminal."""
    print_title(title, out)
    label = max((cell_len(c) for c in columns), default=0)
    for number, row in enumerate(cells, 1):
        grid = Table.grid(padding=(0, 2))
        grid.add_column(no_wrap=True, style="dim", min_width=label)
        grid.add_column(overflow="fold")
        for name, value in zip(columns, row, strict=True):
            if value != "":
                grid.add_row(Text(name), Text(value))
        out.print(Text(f"— {number} of {len(cells)}", style="bold"))
        out.print(grid)
