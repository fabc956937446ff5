"""The `ratings` command line (DESIGN §7): run the pipeline, read lists, the seeds' calculators.

A user mistake (a missing folder, an unknown list, a malformed `--game`, an unknown option) ends
with one sentence on stderr and exit status 2; a fault of the machine (a full disk) or a bug ends
with one sentence and exit status 1 (`RATINGS_DEBUG=1` shows the traceback). Never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from pipelines.cli import as_of, config, query, report
from pipelines.cli.errors import UserError, debug_enabled, describe_exception
from pipelines.cli.lake_option import INBOX_HELP
from pipelines.cli.lake_option import add_lake as _add_lake
from pipelines.cli.lake_option import check_lake_folder as _check_lake_folder
from pipelines.cli.output import HelpFormatter, console, err_console

if TYPE_CHECKING:
    from pipelines.cli.ticker import Heartbeat

LAZY_MODULES = ("calculators", "export", "reading")
"""Command modules imported only by their own command (they import Polars); still reachable as
attributes of this module (`cli.calculators`), imported on first use."""


def __getattr__(name: str) -> object:
    """`cli.calculators` and the other LAZY_MODULES, imported when first asked for."""
    if name in LAZY_MODULES:
        return importlib.import_module(f"pipelines.cli.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_VALUE_LOOKING_LIKE_AN_OPTION = re.compile(r"^-[^-A-Za-z]")
"""`-:1` (an unrated opponent), `-5`, `-.5`: no option of ours starts like that, so it is a value."""

_ARGPARSE_WORDING = [
    (re.compile(r"^argument (?P<opt>[^:]+): expected one argument$"), "{opt} needs a value"),
    (
        re.compile(r"^argument (?P<opt>[^:]+): invalid int value: (?P<value>.+)$"),
        "{opt} takes a whole number, not {value}",
    ),
    (
        re.compile(r"^argument (?P<opt>[^:]+): invalid float value: (?P<value>.+)$"),
        "{opt} takes a number, not {value}",
    ),
    (
        re.compile(
            r"^argument (?:command|COMMAND): invalid choice: (?P<value>\S+) \(choose from (?P<choices>.+)\)$"
        ),
        "unknown command {value}; the commands are {choices}",
    ),
    (
        re.compile(
            r"^argument system: invalid choice: (?P<value>\S+) \(choose from (?P<choices>.+)\)$"
        ),
        "unknown calculator {value}; the calculators are {choices}",
    ),
    (
        re.compile(
            r"^argument (?P<opt>[^:]+): invalid choice: (?P<value>\S+) \(choose from (?P<choices>.+)\)$"
        ),
        "{opt} must be one of {choices}, not {value}",
    ),
    (re.compile(r"^the following arguments are required: (?P<names>.+)$"), "missing {names}"),
    (re.compile(r"^unrecognized arguments: (?P<args>.+)$"), "unknown option or argument '{args}'"),
    (
        re.compile(r"^argument (?P<opt>[^:]+): ignored explicit argument (?P<value>.+)$"),
        "{opt} takes no value (got {value})",
    ),
    (  # a type's own sentence about the value (the calculators' numbers, --port)
        re.compile(r"^argument (?P<opt>[^:]+): (?P<problem>(?:takes|must) .+)$"),
        "{opt} {problem}",
    ),
    (re.compile(r"^argument (?P<opt>[^:]+): (?P<problem>.+)$"), "{opt}: {problem}"),
]
"""argparse's error messages, in the plain wording of the rest of the command line."""


_ARGUMENT_NAMES = {"command": "a command", "system": "a calculator"}
"""How a missing subcommand is named (argparse says its `dest`)."""


def _argument_sentence(prog: str, message: str, choices: dict[str, list[str]]) -> str:
    """One sentence for an argparse error, naming the command and pointing at its --help."""
    text = message.strip()
    for dest, names in choices.items():
        if text in (
            f"the following arguments are required: {dest}",
            f"the following arguments are required: {dest.upper()}",
        ):
            text = f"the following arguments are required: {_ARGUMENT_NAMES.get(dest, dest)}"
            text += f" ({', '.join(names)})"
    for pattern, wording in _ARGPARSE_WORDING:
        match = pattern.match(text)
        if match:
            text = wording.format(**match.groupdict())
            break
    command = prog.removeprefix("ratings").strip()
    where = f"{command}: " if command else ""
    return f"{where}{text} (see '{prog} --help')"


class _Parser(argparse.ArgumentParser):
    """argparse with the project's error contract: one `ratings:` sentence, exit status 2; help
    wrapped at spaces only (`fide-xml-combined`, `--as-of` stay whole at 80 columns)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Raise the mistake as a UserError instead of printing the usage block."""
        subcommands = {
            str(action.dest): list(action.choices)
            for action in self._actions
            if isinstance(action, argparse._SubParsersAction) and action.choices
        }
        raise UserError(_argument_sentence(self.prog, message, subcommands))

    def _parse_optional(self, arg_string: str):
        """Read `-:1` (and other dash-led values no option starts with) as a value."""
        if _VALUE_LOOKING_LIKE_AN_OPTION.match(arg_string):
            return None
        return super()._parse_optional(arg_string)


EXECUTORS = ("in_process", "multiprocess")
"""Where `ratings run --executor` runs the range's steps (see `pipelines.jobs`)."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of every subcommand, or of `command` alone: a command imports only its
    own modules (`ratings query "SELECT 1"` starts without Polars, issue 31)."""
    parser = _Parser(prog="ratings", description="Rating-list pipeline.")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def wanted(name: str) -> bool:
        return command is None or command == name

    if wanted("run"):
        _add_run_parser(sub)
    if wanted("show"):
        _add_show_parser(sub)
    if wanted("diff"):
        _add_diff_parser(sub)
    if wanted("history"):
        _add_history_parser(sub)
    if wanted("query"):
        query.add_query_parser(sub, _add_lake)
    if wanted("preview"):
        from pipelines.cli.preview import add_preview_parser

        add_preview_parser(sub)
    if wanted("ui"):
        from pipelines.cli import ui_options

        ui = sub.add_parser("ui", help="open the Dagster web UI on this workspace")
        ui.add_argument("--inbox", help=INBOX_HELP)
        _add_lake(ui)
        ui.add_argument("--port", type=ui_options.port, default=3000, help="1 to 65535")
        ui_options.add_ui_options(ui)
    if wanted("report"):
        report.add_report_parser(sub, _add_lake)
    if wanted("export"):
        from pipelines.cli import export

        _add_lake(export.add_export_parser(sub))
    if wanted("tournament") or wanted("find"):
        from pipelines.cli import tournament

        tournament.add_parsers(sub, _add_lake)
    if wanted("reconcile"):
        from pipelines.cli import reconcile

        reconcile.add_reconcile_parser(sub, _add_lake)
    if wanted("calc"):
        from pipelines.cli import calculators

        calc = sub.add_parser("calc", help="the calculators of the seed pages, every step shown")
        calculators.add_calc_parsers(calc.add_subparsers(dest="system", required=True))
    if wanted("completion"):
        from pipelines.cli import completion

        completion.add_completion_parser(sub)
    return parser


def _version() -> str:
    """`ratings --version`: the installed package's version."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"ratings {version('rating-lists')}"
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "ratings (version unknown: not installed)"


def _add_run_parser(sub: argparse._SubParsersAction) -> None:
    """`ratings run`."""
    from rating_core.budget import least_run_memory  # a small module: no library loaded

    run = sub.add_parser("run", help="ingest the inbox and publish every list, period by period")
    run.add_argument("--inbox", help=INBOX_HELP)
    _add_lake(run)
    run.add_argument(
        "--full", action="store_true", help="recompute every period, not only from the first change"
    )
    run.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="in_process",
        help="run the systems' steps in this process (default) or side by side, one process each",
    )
    run.add_argument(
        "--timings",
        action="store_true",
        help="after the summary, print each step's wall and CPU time and page faults",
    )
    run.add_argument(
        "--memory",
        metavar="SIZE",
        help=f"a memory budget such as 3G or 1500MiB (at least {least_run_memory() >> 20}MiB): "
        "the run's peak stays within it, and a lake whose players and games would not fit is "
        "refused",
    )


def _add_show_parser(sub: argparse._SubParsersAction) -> None:
    """`ratings show`."""
    show = sub.add_parser("show", help="show a published list (or, without LIST, what exists)")
    show.add_argument("list", nargs="?", help="list name, e.g. fide-standard or site-elo")
    show.add_argument("--period", help="YYYY-MM (default: the latest)")
    show.add_argument("--version", type=int, help="version number, 1 or more (default: the latest)")
    show.add_argument(
        "--top", type=int, help="rows to print, 1 or more (default 20; every row with --all/--json)"
    )
    show.add_argument("--json", action="store_true", help="print JSON (every row and column)")
    from pipelines.cli.top_lists import add_top_options

    add_top_options(show)
    show.add_argument("--all", action="store_true", help="print every row and column")
    as_of.add_as_of_options(show)
    _add_lake(show)


def _add_diff_parser(sub: argparse._SubParsersAction) -> None:
    """`ratings diff`."""
    diff = sub.add_parser("diff", help="show what a version changed against its parent")
    diff.add_argument("list")
    diff.add_argument("period")
    diff.add_argument("--version", type=int, help="version, 2 or more (default: the latest)")
    diff.add_argument(
        "--from-original",
        action="store_true",
        help="against the period's original list instead of the version's parent",
    )
    diff.add_argument("--json", action="store_true", help="print JSON")
    diff.add_argument("--all", action="store_true", help="print every column")
    _add_lake(diff)


def _add_history_parser(sub: argparse._SubParsersAction) -> None:
    """`ratings history`."""
    history = sub.add_parser("history", help="a player's values, game by game, with the causes")
    history.add_argument("player")
    history.add_argument("--json", action="store_true", help="print JSON")
    history.add_argument("--all", action="store_true", help="print every column")
    as_of.add_as_of_options(history)
    _add_lake(history)


def _memory(text: str | None) -> int | None:
    """`ratings run --memory` in bytes (None: not given), or one `ratings:` sentence (a budget
    below what every run holds is refused here, before any work)."""
    from rating_core.budget import BudgetError, run_memory_bytes

    if text is None:
        return None
    try:
        return run_memory_bytes(text)
    except BudgetError as error:
        raise UserError(str(error)) from error


def cmd_run(args: argparse.Namespace) -> int:
    """Materialize everything through Dagster in period order and print the summary; off a
    terminal, a heartbeat names each step that is silent for a few seconds (the first: loading
    the kernels' modules, checking the inbox, starting a first run's warm-up)."""
    from pipelines.cli.ticker import plain_heartbeat

    heartbeat = plain_heartbeat(err_console)
    with heartbeat, heartbeat.doing("checking the inbox and the kernels"):
        return _run_command(args, heartbeat)


def _run_command(args: argparse.Namespace, heartbeat: Heartbeat) -> int:
    """`cmd_run`'s work, `heartbeat` running."""
    from pipelines.cli.disk import as_disk_full
    from pipelines.cli.late_results_config import check_late_results
    from pipelines.cli.prepare import busy_line, first_import_note, start_warm_up
    from pipelines.cli.timings import StepClock, print_timings
    from rating_core.ingest.common import UnreadableFileError
    from rating_core.ingest.inbox import check_merge_chains, check_starting_lists, inbox_files
    from rating_core.ingest.merges import MergeChainError
    from rating_core.lake import facts
    from rating_core.systems.club.folders import ClubFolderError

    clock = StepClock()
    inbox = Path(args.inbox)
    if not inbox.is_dir():
        raise UserError(f"inbox folder '{inbox}' does not exist")
    lake = Path(args.lake)
    _check_lake_folder(lake)
    memory = _memory(args.memory)
    late_results = check_late_results()  # ratings.toml's [late_results]: a bad value stops here
    try:  # the inbox's layout, before any work: club folders that cannot each have a list
        inbox_files(inbox)
        # a merges file unchanged since a run read it is not read again (issue 31 item 1)
        check_merge_chains(inbox, lambda path: facts.unchanged(lake, path.absolute()))
        check_starting_lists(inbox)
    except (ClubFolderError, MergeChainError, UnreadableFileError) as error:
        raise UserError(str(error)) from error
    # a first run's warm-up processes compile the cold kernels from now on, while Dagster is
    # imported and the lake's instance opened
    warm_up = start_warm_up(inbox)
    loading = "loading Dagster and the pipeline"
    if warm_up is not None:  # a first run: say so at once, before the seconds of importing
        for line in [*warm_up.lines(), busy_line()]:
            if line:
                console.print(line, highlight=False)
        console.print(f"{loading} meanwhile{first_import_note()}", highlight=False)
    try:
        with heartbeat.doing(loading):
            from pipelines.cli.run import run_pipeline
            from pipelines.cli.summary import print_summary

        resume_collection()
        clock.lap("imports")
        try:
            outcome = run_pipeline(
                inbox,
                lake,
                console=console,
                full=args.full,
                executor=args.executor,
                warm_up=warm_up,
                clock=clock,
                memory=memory,
                late_results=late_results,
                heartbeat=heartbeat,
            )
        except Exception as error:  # a full disk may say only "disk I/O error": say it is full
            full = as_disk_full(error, lake, "'ratings run'")
            if full is error:
                raise
            raise full from None
        heartbeat.stop()  # the work is done: the summary says the rest
    finally:
        if warm_up is not None:  # ended by the run; here if the run never started
            warm_up.stop()
    clock.lap("closing the lake")
    print_summary(outcome, console)
    clock.lap("summary")
    if args.timings:
        print_timings(clock, console)
    if outcome.stopped is not None:  # after the summary of what was published before it
        raise as_disk_full(outcome.stopped, lake, "'ratings run'")
    return 0 if outcome.ok else 1


def ui_environment(inbox: Path, lake: Path) -> dict[str, str]:
    """The environment of the UI's processes: the workspace reads RATINGS_INBOX / RATINGS_LAKE,
    and DAGSTER_HOME names the lake's instance (`<lake>/.dagster`, unless the user set one), the
    one `ratings run --lake` records its runs in."""
    from assets.resources import instance_home

    return {
        **os.environ,
        "RATINGS_INBOX": str(inbox.resolve()),
        "RATINGS_LAKE": str(lake.resolve()),
        "DAGSTER_HOME": str(instance_home(lake)),
    }


def cmd_ui(args: argparse.Namespace) -> int:
    """Start `dagster dev` on the workspace with the chosen inbox and lake, serving the lake's
    Dagster instance, so the UI shows the materializations and checks of `ratings run`.

    The UI does not take the lake's lock (only `ratings run` does)."""
    from pipelines.cli.ui_options import check_lake, quiet_environment

    root = Path(__file__).resolve().parents[2]
    lake = Path(args.lake)
    _check_lake_folder(lake)
    check_lake(lake, args.create)
    env = quiet_environment(ui_environment(Path(args.inbox), lake))
    dagster = Path(sys.executable).with_name("dagster")
    command = [str(dagster), "dev", "-w", str(root / "workspace.yaml"), "-p", str(args.port)]
    return subprocess.call(command, cwd=root, env=env)


def resume_collection() -> None:
    """Freeze what the imports made and collect garbage again, if `main` paused collection for
    its own process: Dagster's import allocates some 200,000 objects that live as long as the
    process, and collecting while importing them, then scanning them again in every full
    collection of the run, cost about a second of CPU (issue 10). A no-op otherwise."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def skip_final_collection() -> None:
    """Freeze every live object so that the interpreter's last garbage collection at exit has
    nothing to look at: after a large run that collection took seconds (freeing the run's
    frames one cycle at a time), while the operating system reclaims the memory at once.
    Only for the process's own command: a caller of `main(argv)` lives on."""
    gc.freeze()


IMPORTS_DAGSTER = ("run", "preview")
"""The commands that import Dagster (and the pipeline) when they start: each calls
`resume_collection` once it has."""


def _cmd_preview(args: argparse.Namespace) -> int:
    """`ratings preview`, its module (and Dagster with it) imported only for that command: `ratings
    run` starts reading its PGN files before it imports Dagster."""
    import pipelines.cli.run  # noqa: F401  (Dagster and the pipeline, imported before collection resumes)
    from pipelines.cli import preview

    resume_collection()
    return preview.cmd_preview(args)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `ratings` console script: every failure ends as one sentence."""
    handlers: dict[str, Callable[[argparse.Namespace], int] | str] = {
        "run": cmd_run,
        "show": "pipelines.cli.reading:cmd_show",
        "diff": "pipelines.cli.reading:cmd_diff",
        "history": "pipelines.cli.reading:cmd_history",
        "query": query.cmd_query,
        "preview": _cmd_preview,
        "ui": cmd_ui,
        "calc": "pipelines.cli.calculators:cmd_calc",
        "report": report.cmd_report,
        "export": "pipelines.cli.export:cmd_export",
        "tournament": "pipelines.cli.tournament:cmd_tournament",
        "find": "pipelines.cli.tournament:cmd_find",
        "reconcile": "pipelines.cli.reconcile:cmd_reconcile",
        "completion": "pipelines.cli.completion:cmd_completion",
    }  # "module:function": imported only when that command runs
    command = "the command line"
    if argv is None:  # the `ratings` process itself: no collection until its imports are done
        gc.disable()
    try:
        if argv is None:  # the `ratings` process itself: no library warning reaches the user
            from pipelines.cli.completion import complete_if_asked

            complete_if_asked(build_parser)
            _silence_warnings()
        words = list(sys.argv[1:] if argv is None else argv)
        first = words[0] if words else None
        args = build_parser(first if first in handlers else None).parse_args(argv)
        command = f"'ratings {args.command}'"
        config.apply(args)
        if args.command not in IMPORTS_DAGSTER:
            resume_collection()
        handler = handlers[args.command]
        if isinstance(handler, str):
            module, name = handler.split(":")
            handler = getattr(importlib.import_module(module), name)
        status = handler(args)
        if argv is None:  # the `ratings` process itself, about to exit
            sys.stdout.flush()  # a reader gone is met here, not in the interpreter's last flush
            skip_final_collection()
        return status
    except BrokenPipeError:
        return _reader_gone()
    except UserError as error:
        _say(str(error))
        return 2
    except KeyboardInterrupt:
        err_console.print("ratings: interrupted", highlight=False)
        return 130
    except Exception as error:  # a full disk, a denied permission, or a bug: still one sentence
        if debug_enabled():
            raise
        _say(describe_exception(error, command))
        return 1


READER_GONE = 128 + signal.SIGPIPE
"""Exit status when the reader of the output stopped early (`ratings query ... | head`): 141, what
the shell reports for `cat big | head`'s `cat`, killed by SIGPIPE; nothing is printed."""


def _reader_gone() -> int:
    """Stop quietly after the reader of stdout closed it, as Python's documentation advises
    ("Note on SIGPIPE", the signal module): stdout is pointed at /dev/null so that the
    interpreter's last flush of what is still buffered fails no more ("Exception ignored ...")."""
    with contextlib.suppress(OSError, ValueError):  # stdout replaced by a caller, or closed
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return READER_GONE


def _silence_warnings() -> None:
    """Hide Python warnings (a library's deprecations are for developers), unless
    `RATINGS_DEBUG` asks to see everything."""
    import warnings

    if not debug_enabled():
        warnings.simplefilter("ignore")


def _say(sentence: str) -> None:
    """Print `ratings: <sentence>` on stderr (no markup): one line for a script reading a pipe;
    on a terminal wrapped at spaces, so the terminal never cuts a name or a path in two."""
    err_console.print(
        f"ratings: {sentence}",
        style="red",
        highlight=False,
        markup=False,
        soft_wrap=not err_console.is_terminal,
    )


if __name__ == "__main__":
    raise SystemExit(main())
