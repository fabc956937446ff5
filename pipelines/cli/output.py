"""Terminal output shared by the commands: rich tables for people, JSON for machines.

Every string a user provided (file names, ids, names, reasons) is printed as plain text, never as
rich markup, and tables are fitted to the terminal: ids and numbers are never broken, long file
names are shortened in the middle, low-value columns are dropped (with a note) or, when every
column was asked for, each row is printed as a stack of `column  value` lines.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Collection, Sequence

from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

console = Console()
err_console = Console(stderr=True)

ELLIPSIS = "…"
SHORTEST_NAME = 20
"""A shortened file name keeps at least this many characters (head, ellipsis and tail)."""
LONGEST_WORD = 32
"""A wrapping column is never made wider than this for one word: longer words are folded."""


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
        words = (min(cell_len(word), LONGEST_WORD) for cell in cells for word in cell.split())
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

    `wrap` columns (names, reasons) wrap at spaces; `shorten` columns (file names) are cut in the
    middle; every other column is printed whole on one line. When the table is too wide, the
    `drop_order` columns are left out, first listed first, and a note says which (`hint` tells how
    to see them); with `stack_when_narrow` (the user asked for every column), rows are stacked.
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
            min(natural[name], SHORTEST_NAME)
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
    table = Table(title=Text(title), title_justify="left")
    for name in kept:
        if name in shorten:
            fitted = min(natural[name], least[name] + max(spare, 0))
            spare -= fitted - least[name]
            by_column[name] = [shorten_middle(c, fitted) for c in by_column[name]]
        table.add_column(
            _header(name, least[name]) if split else name,
            justify="right" if name in right else "left",
            no_wrap=name not in wrap,
            overflow="fold",
            min_width=least[name] if name in wrap else None,
        )
    for i in range(len(cells)):
        table.add_row(*(Text(by_column[name][i]) for name in kept))
    out.print(table)
    if dropped:
        out.print(
            Text(f"not shown at {width} columns: {', '.join(dropped)} ({hint})"),
            style="dim",
        )


def _print_stacked(
    title: str, columns: Sequence[str], cells: Sequence[Sequence[str]], out: Console
) -> None:
    """Each row as `column  value` lines under the title: for every column on a narrow terminal."""
    out.print(Text(title))
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
