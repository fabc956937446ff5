"""`[late_results]` of `ratings.toml` in the working directory (DESIGN §2, RULES §3.4): the
late-results policy of each list family, read and validated before a run or a preview does any
work, so that a bad value is one `ratings:` sentence naming the file, the key and the value.

A small reader of its own, for this table only (the general `ratings.toml` loader of the
command line reads `lake` and `inbox`); the policy model and its validation are
`rating_core.systems.late_results`.

The run passes the policy to the assets (`PipelinePaths.late_results`): FIDE's `next_list`
places a late tournament on the first unpublished list (RULES §3.4), and every manifest
records its family's policy.
"""

from __future__ import annotations

from pathlib import Path

from pipelines.cli import config
from rating_core.systems.late_results import LateResultsPolicy

CONFIG_FILE = config.CONFIG_FILE


def read_late_results(folder: Path | None = None) -> tuple[LateResultsPolicy, bool]:
    """The policy of `<folder>/ratings.toml`'s `[late_results]` (folder: the working
    directory), and whether the file sets one; the defaults when there is no file or no
    table. A file that is not TOML or a bad key or value raises `UserError` in one sentence
    (`pipelines.cli.config` reads the file, the rules model checks the table)."""
    settings = config.load(environ={}, folder=folder)
    return settings.late_results, settings.late_results_set


def check_late_results(folder: Path | None = None) -> LateResultsPolicy:
    """The policy `read_late_results` reads, checked before a run or a preview does any work
    (a bad value stops it in one sentence), for the run to apply."""
    policy, _ = read_late_results(folder)
    return policy
