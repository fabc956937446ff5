"""One plain sentence per error (issue 9 item 13): `pipelines.cli.errors` on live and Dagster errors."""

from __future__ import annotations

import errno
import gzip
import os
import sys

import dagster as dg
import polars as pl
import pytest
from dagster import DagsterExecutionStepExecutionError

from pipelines.cli import app as cli
from pipelines.cli.errors import UserError, describe_error_info, describe_exception, plain
from rating_core.ingest.common import UnreadableFileError


def _serialized(exc: BaseException):
    """Dagster's copy of `exc` as a failed step records it: a step named `games` raises it."""

    @dg.asset(name="games")
    def failing() -> None:
        raise exc

    result = dg.materialize(
        [failing], instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
    )
    (failure,) = [event for event in result.all_events if event.is_step_failure]
    return failure.step_failure_data.error


def _unreadable_from_decoder() -> UnreadableFileError:
    """What a reader raises for a truncated gzip: its sentence, caused by the decoder's error."""
    try:
        gzip.decompress(gzip.compress(b"x" * 1000)[:20])
    except (EOFError, OSError) as low:
        try:
            raise UnreadableFileError("platform/g.pgn.gz: truncated gzip data") from low
        except UnreadableFileError as exc:
            return exc
    raise AssertionError("gzip accepted a truncated stream")


FULL = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/lake/games/.part-0.parquet.tmp-1f2e")
POLARS_FULL = pl.exceptions.ComputeError(
    "parquet: File out of specification: underlying IO error: No space left on device (os error 28)"
)

CASES = [
    (FULL, "the disk is full (no space left on the device) writing in '/lake/games'"),
    (POLARS_FULL, "the disk is full (no space left on the device); free some space"),
    (
        PermissionError(errno.EACCES, "Permission denied", "/lake/x"),
        "permission denied on '/lake/x'",
    ),
    (
        FileNotFoundError("No such file or directory (os error 2): /lake/t"),
        "'/lake/t' does not exist",
    ),
    (_unreadable_from_decoder(), "platform/g.pgn.gz: truncated gzip data"),
    (UserError("inbox folder 'x' does not exist"), "inbox folder 'x' does not exist"),
    (KeyError("site"), "internal error in games: 'site'; rerun with RATINGS_DEBUG=1"),
    (
        pl.exceptions.ColumnNotFoundError(
            'unable to find column "source"; valid columns: []\n\nplan'
        ),
        'internal error in games: unable to find column "source"; valid columns: []; rerun',
    ),
]


@pytest.mark.parametrize(("exc", "expected"), CASES)
def test_live_and_dagster_errors_read_the_same(exc: BaseException, expected: str) -> None:
    live = describe_exception(exc, "games")
    stored = describe_error_info(_serialized(exc), "games")
    assert expected in live
    assert stored == live
    for name in ("Error", "Exception", "errno", "os error", "polars", "rating_core", "Dagster"):
        assert name not in live, live
    assert "\n" not in live


def test_the_readers_sentence_wins_over_its_cause() -> None:
    # today the innermost error (the decoder's EOFError) was printed instead
    sentence = describe_error_info(_serialized(_unreadable_from_decoder()), "games")
    assert sentence == "platform/g.pgn.gz: truncated gzip data"


def test_a_live_dagster_wrapper_is_looked_through() -> None:
    try:
        try:
            raise _unreadable_from_decoder()
        except UnreadableFileError as inner:
            raise DagsterExecutionStepExecutionError(
                'Error occurred while executing op "games":',
                user_exception=inner,
                original_exc_info=sys.exc_info(),
                step_key="games",
                op_name="games",
                op_def_name="games",
            ) from inner
    except DagsterExecutionStepExecutionError as wrapped:
        assert describe_exception(wrapped, "games") == "platform/g.pgn.gz: truncated gzip data"


def test_plain_drops_class_names() -> None:
    assert plain("polars.exceptions.ComputeError: bad value") == "bad value"
    assert (
        plain("zlib.error: Error -3 while decompressing data")
        == "Error -3 while decompressing data"
    )
    assert plain("ValueError: x is not y.\nmore") == "x is not y"
    assert (
        plain("platform/MyError.csv: the file is empty")
        == "platform/MyError.csv: the file is empty"
    )


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["calc", "ukd", "--rating", "abc"], "ratings: calc ukd: --rating takes a whole number"),
        (["nope"], "ratings: unknown command 'nope'; the commands are 'run', 'show'"),
        (["calc", "elo", "--rating", "1", "--opponent", "1", "--result", "1", "--x"], "'--x'"),
        (["show", "--lake", "s3://bucket/lake"], "ratings: show: --lake: only local lake folders"),
    ],
)
def test_argument_errors_in_process(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(argv) == 2
    captured = capsys.readouterr()
    assert expected in captured.err
    assert "usage:" not in captured.err and len(captured.err.strip().splitlines()) == 1


def test_unrated_opponent_is_a_value_not_an_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["calc", "ukd", "--rating", "1500", "--game", "-:1", "--json"]) == 0
    assert '"opponent": null' in capsys.readouterr().out


def test_an_unexpected_error_is_one_sentence(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(_args: object) -> int:
        raise RuntimeError("something broke\nsecond line")

    from pipelines.cli import calculators  # the module `cli.calculators` imports lazily

    monkeypatch.setitem(calculators.CALCULATORS, "elo", broken)
    monkeypatch.delenv("RATINGS_DEBUG", raising=False)
    status = cli.main(["calc", "elo", "--rating", "1", "--opponent", "1", "--result", "1"])
    err = capsys.readouterr().err.strip()
    assert status == 1
    assert err == (
        "ratings: internal error in 'ratings calc': something broke; "
        "rerun with RATINGS_DEBUG=1 for the traceback"
    )
    monkeypatch.setenv("RATINGS_DEBUG", "1")
    with pytest.raises(RuntimeError):
        cli.main(["calc", "elo", "--rating", "1", "--opponent", "1", "--result", "1"])


def test_only_the_process_own_command_skips_the_final_collection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`ratings` (argv from the process) pauses collection for its imports, then freezes what
    they made and collects again (`resume_collection`), and freezes its objects before exiting,
    so the interpreter's last garbage collection is skipped; a caller passing argv is left
    alone."""
    frozen: list[bool] = []
    monkeypatch.setattr(cli.gc, "freeze", lambda: frozen.append(True))
    args = ["calc", "elo", "--rating", "1500", "--opponent", "1500", "--result", "1", "--json"]
    assert cli.main(args) == 0
    assert frozen == []
    monkeypatch.setattr(cli.sys, "argv", ["ratings", *args])
    assert cli.main() == 0
    assert frozen == [True, True]  # after the imports, before exiting
    assert cli.gc.isenabled()
