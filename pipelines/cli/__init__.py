"""The `ratings` command line: argument parsing, output and the commands, apart from orchestration.

Orchestration (`pipelines.definitions`, jobs, schedules, sensors) never imports this package;
the commands import orchestration to run its jobs in process.
"""

from pipelines.cli.app import main

__all__ = ["main"]
