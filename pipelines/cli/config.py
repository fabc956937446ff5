"""Where `--lake` and `--inbox` come from when they are not given (DESIGN §2 "Configuration").

Command-line options win over the environment (`RATINGS_LAKE`, `RATINGS_INBOX`), which wins over a
`ratings.toml` in the working directory, which wins over the defaults (`./lake`, `data_samples`).
The file also holds the per-list-family policies for late results (RULES §3.4), read and
validated here so that the pipeline receives them ready to use:

    lake = "lake"
    inbox = "data_samples"

    [late_results]
    fide = "next_list"
    ukd = "revise"

A bad value (a key the file cannot have, a value of the wrong kind, a policy that does not exist)
is one `ratings:` sentence naming the file, the key and the value.
"""

from __future__ import annotations

import argparse
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipelines.cli.errors import UserError

if TYPE_CHECKING:
    from rating_core.systems.late_results import LateResultsPolicy

CONFIG_FILE = "ratings.toml"
"""The configuration file, read from the working directory."""

LAKE_ENV = "RATINGS_LAKE"
INBOX_ENV = "RATINGS_INBOX"

DEFAULT_LAKE = "lake"
DEFAULT_INBOX = "data_samples"

TOP_KEYS = ("lake", "inbox", "late_results")
"""The keys `ratings.toml` may hold; anything else is refused (a typo must not pass silently)."""


@dataclass(frozen=True)
class Settings:
    """The defaults in force for this command: each value with the place it came from."""

    lake: str = DEFAULT_LAKE
    inbox: str = DEFAULT_INBOX
    late_results_table: Mapping[str, object] | None = None
    """`ratings.toml`'s `[late_results]` table as written (checked by `load`), None without one."""
    sources: Mapping[str, str] = field(default_factory=dict)
    """`lake` / `inbox` -> where the value came from (`RATINGS_LAKE`, `ratings.toml`); absent:
    the built-in default."""

    @property
    def late_results(self) -> LateResultsPolicy:
        """Each list family's late-result policy: the table's, the defaults for the rest."""
        return late_results_of(self.late_results_table)

    @property
    def late_results_set(self) -> bool:
        """Whether `ratings.toml` has a `[late_results]` table (else the defaults)."""
        return self.late_results_table is not None


def _path_value(value: object, key: str, where: str) -> str:
    """A folder given in the file or the environment: a non-empty local path."""
    from rating_core.lake.location import as_local_path

    shown = repr(value) if not isinstance(value, str) else f"'{value}'"
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"{where}: {key} must be a folder name in quotes, not {shown}")
    try:
        as_local_path(value)
    except ValueError as error:
        raise UserError(f"{where}: {key} = {shown} is not a local folder ({error})") from None
    return value


def late_results_of(table: object, where: str = CONFIG_FILE) -> LateResultsPolicy:
    """`[late_results]`: each list family's policy (the rules' own model and checks, RULES §3.4),
    the defaults for the families not named; a bad family or value is one sentence. Imported
    here, not at the top: the rules bring Polars, which the quick commands never load."""
    from rating_core.systems.late_results import LateResultsError, late_results_policy

    try:
        return late_results_policy(table, where)  # type: ignore[arg-type]
    except LateResultsError as error:
        raise UserError(str(error)) from None


def read_file(path: Path) -> dict[str, Any]:
    """The parsed `ratings.toml` (empty when there is none); a file that is not TOML or holds
    an unknown key is one sentence."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return {}
    except IsADirectoryError:
        raise UserError(f"{path} is a folder, not a configuration file") from None
    except UnicodeDecodeError:
        raise UserError(f"{path} is not UTF-8 text") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise UserError(f"{path} is not valid TOML ({error})") from None
    for key in data:
        if key not in TOP_KEYS:
            raise UserError(f"{path}: unknown key '{key}'; the keys are {', '.join(TOP_KEYS)}")
    return data


def load(environ: Mapping[str, str] | None = None, folder: Path | None = None) -> Settings:
    """The settings from `ratings.toml` in `folder` (the working directory) and the environment,
    the environment winning."""
    environ = os.environ if environ is None else environ
    path = (folder or Path.cwd()) / CONFIG_FILE
    data = read_file(path)
    values = {"lake": DEFAULT_LAKE, "inbox": DEFAULT_INBOX}
    sources: dict[str, str] = {}
    for key in ("lake", "inbox"):
        if key in data:
            values[key] = _path_value(data[key], key, str(path))
            sources[key] = str(path)
    for key, variable in (("lake", LAKE_ENV), ("inbox", INBOX_ENV)):
        if variable in environ:
            values[key] = _path_value(environ[variable], variable, "the environment")
            sources[key] = variable
    table = data.get("late_results")
    if table is not None:
        late_results_of(table, str(path))  # a bad value is said by every command, before any work
    return Settings(values["lake"], values["inbox"], table, sources)


def apply(args: argparse.Namespace, settings: Settings | None = None) -> Settings | None:
    """Fill the `lake` and `inbox` the command line left out (None) from the settings. A command
    with neither option (`calc`) reads no file; one with either reads it even when both are
    given, so a mistake in the file is said whichever options a command gets. Returns the
    settings used, if any."""
    keys = [key for key in ("lake", "inbox") if key in vars(args)]
    if not keys:
        return settings
    settings = settings or load()
    for key in keys:
        if getattr(args, key) is None:
            setattr(args, key, getattr(settings, key))
    return settings
