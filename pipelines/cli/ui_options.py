"""The checks of `ratings ui` before Dagster starts: a port that exists, a lake that exists (or
`--create`), and an environment in which no library warning reaches the user.

A mistyped `--lake` used to start the UI on a new, empty lake without a word; now the UI refuses a
lake that is not there unless asked to create it.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

from pipelines.cli.errors import UserError, debug_enabled

PORTS = (1, 65535)
"""The TCP ports `--port` may name."""


def port(text: str) -> int:
    """argparse type of `--port`: a whole number from 1 to 65535."""
    try:
        value = int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes a port number, not '{text}'") from None
    if not PORTS[0] <= value <= PORTS[1]:
        raise argparse.ArgumentTypeError(
            f"must be a port number from {PORTS[0]} to {PORTS[1]}, not {value}"
        )
    return value


def add_ui_options(ui: argparse.ArgumentParser) -> None:
    """`--create` of `ratings ui`."""
    ui.add_argument(
        "--create",
        action="store_true",
        help="start on a new, empty lake if --lake does not exist (default: refuse)",
    )


def check_lake(lake: Path, create: bool) -> None:
    """Refuse a lake folder that does not exist unless `create` (a typo would silently start
    the UI on an empty lake)."""
    if lake.is_dir() or create:
        return
    raise UserError(
        f"there is no lake at '{lake}' (run 'ratings run' first, check --lake, or give "
        "--create to start the UI on a new, empty lake)"
    )


def quiet_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` with Python's warnings off in the UI's processes (Dagster's own deprecation and
    supersession warnings, printed with a file path, are for developers, not users), unless
    `RATINGS_DEBUG` asks to see everything or the user set `PYTHONWARNINGS` themselves."""
    env = dict(environ)
    if not debug_enabled() and "PYTHONWARNINGS" not in env:
        env["PYTHONWARNINGS"] = "ignore"
    return env
