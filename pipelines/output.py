"""Terminal output shared by the commands: rich tables for people, JSON for machines."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

console = Console()
err_console = Console(stderr=True)


def print_json(payload: object) -> None:
    """Print machine-readable output on stdout."""
    sys.stdout.write(json.dumps(payload, indent=2, default=str) + "\n")


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """Print a rich table with a title."""
    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(str(column))
    for row in rows:
        table.add_row(*("" if v is None else str(v) for v in row))
    console.print(table)
