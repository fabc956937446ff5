"""The work of `ratings run`'s ingest in small, run in a pseudo-terminal by
`tests/pipelines/cli/test_progress_terminal.py`: a PGN file read window by window by the real
streamed reader (`pgn_windows`, whose reports the live display shows) inside a Dagster step of
the lake's own instance (which captures the step's stdout and stderr, as in `ratings run`), under
the display `ratings run` uses.

After each window the step says so on one pipe (`w`) and waits for a byte on another: the test
answers once the terminal has received a frame drawn since, so the step never runs ahead of the
display and the test needs no timing. Usage: `python -m tests.support.live_step PGN LAKE TELL
WAIT WINDOW` (TELL and WAIT: the pipes' descriptors); prints `games N` when done.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import dagster as dg

from assets.resources import lake_instance
from pipelines.cli.progress import ProgressDisplay
from pipelines.cli.run import QUIET
from rating_core.ingest.pgn import pgn_windows
from rating_core.progress import listening

LABEL = "platform/lichess_db_standard_rated_2025-05.pgn"


def main(pgn: Path, lake: Path, tell: int, wait: int, window: int) -> int:
    """Read `pgn` in a Dagster step of `lake`'s instance under `ratings run`'s display."""

    @dg.op
    def read_the_file() -> int:
        """The streamed reader's windows, one at a time, each followed by the handshake."""
        games = 0
        for stream, _ in pgn_windows(pgn, LABEL, window=window):
            games = stream.games
            os.write(tell, b"w")
            if not os.read(wait, 1):  # the test went away
                break
        return games

    job = dg.GraphDefinition(name="live_step", node_defs=[read_the_file]).to_job()
    with ProgressDisplay() as display, display.status("ingesting the inbox"), listening(display):
        result = job.execute_in_process(run_config=QUIET, instance=lake_instance(lake))
    print(f"games {result.output_for_node('read_the_file')}")
    return 0


if __name__ == "__main__":
    pgn, lake, tell, wait, window = sys.argv[1:]
    sys.exit(main(Path(pgn), Path(lake), int(tell), int(wait), int(window)))
