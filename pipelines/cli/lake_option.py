"""The `--lake` option every lake command shares (its default from the environment or
`ratings.toml`), the `--inbox` option's help, and the check of the lake folder before any work.

Apart from `app` so that a command module (`preview`) registers and checks the option without
importing the argument parser's module, which imports it back (no cycle between CLI modules).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pipelines.cli import config
from pipelines.cli.errors import UserError


def lake_folder(text: str) -> str:
    """`--lake` is a local folder: a URL (`s3://...`) is refused while parsing the arguments."""
    from rating_core.lake.location import as_local_path

    try:
        as_local_path(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def add_lake(parser: argparse.ArgumentParser) -> None:
    """Add `--lake DIR` to a command's parser (no default here: `config.apply` fills it from
    the environment, then `ratings.toml`, then ./lake)."""
    parser.add_argument(
        "--lake",
        type=lake_folder,
        help=f"lake folder (default ${config.LAKE_ENV}, then {config.CONFIG_FILE}, then ./lake)",
    )


INBOX_HELP = (
    f"inbox folder (default ${config.INBOX_ENV}, then {config.CONFIG_FILE}, then data_samples)"
)


def check_lake_folder(lake: Path) -> None:
    """Refuse, before any work, a lake path that is a file or lies under one."""
    for path in (lake, *lake.parents):
        if path.exists():
            if not path.is_dir():
                if path == lake:
                    raise UserError(f"the lake '{lake}' is a file, not a folder")
                raise UserError(f"the lake '{lake}' is not a folder: '{path}' is a file")
            return
