"""The user mistakes of issue 33 item 6, each one `ratings:` sentence with exit status 2: the
calculators' numbers (finite and in range), `ui --port`, `ui` on a lake that does not exist,
and `ratings --version` / `ratings completion` as people expect them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipelines.cli import app as cli

PYTHON_NAMES = re.compile(r"<class|[A-Za-z]+(Error|Exception|Operation)\b|decimal\.|Traceback")


def _one_sentence(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    status = cli.main(argv)
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert status == 2, (captured.out, err)
    assert err.startswith("ratings: ") and "\n" not in err, err
    assert not PYTHON_NAMES.search(err), err
    return err


ELO = ["calc", "elo", "--opponent", "1500", "--result", "1"]
SITE = ["calc", "site", "--category", "blitz", "--opponent", "1500", "--result", "1"]
SITE += ["--site-elo", "1500", "--opponent-site-elo", "1500"]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        ([*ELO, "--rating", "inf"], ["--rating", "finite", "inf"]),
        ([*ELO, "--rating=-inf"], ["--rating", "finite"]),
        ([*ELO, "--rating", "nan"], ["--rating", "finite", "nan"]),
        ([*ELO, "--rating", "1e9"], ["--rating", "0 to 4000", "1e9"]),
        ([*ELO, "--rating", "-1"], ["--rating", "0 to 4000"]),
        ([*ELO, "--rating", "1500", "--k", "-5"], ["--k", "more than 0", "-5"]),
        ([*ELO, "--rating", "1500", "--k", "0"], ["--k", "more than 0"]),
        ([*ELO, "--rating", "1500", "--k", "nan"], ["--k", "finite"]),
        ([*ELO, "--rating", "abc"], ["--rating", "a number", "abc"]),
        (["calc", "fide", "--rating", "-1500", "--k", "20", "--game", "1500:1"], ["0 to 4000"]),
        (["calc", "fide", "--rating", "1e9", "--k", "20", "--game", "1500:1"], ["0 to 4000"]),
        (["calc", "fide", "--rating", "1500", "--k", "-20", "--game", "1500:1"], ["--k"]),
        (["calc", "fide", "--rating", "1500", "--k", "20", "--game", "-5:1"], ["-5:1"]),
        (["calc", "fide", "--rating", "1500", "--k", "20", "--game", "1e9:1"], ["1e9:1"]),
        (["calc", "ukd", "--rating", "1500", "--game", "99999:1"], ["99999:1", "4000"]),
        (["calc", "ukd", "--rating", "nan", "--game", "1500:1"], ["--rating"]),
        (["calc", "fibs", "--rating", "nan", "--opponent", "1500", "--length", "3"], ["finite"]),
        (["calc", "fibs", "--rating", "1500", "--opponent", "inf", "--length", "3"], ["finite"]),
        (["calc", "fibs", "--rating", "1500", "--opponent", "1500", "--length", "500"], ["99"]),
        (
            ["calc", "fibs", "--rating", "1500", "--opponent", "1500", "--length", "3"]
            + ["--experience", "-4"],
            ["--experience", "0 or more", "-4"],
        ),
        ([*SITE, "--rating", "1500", "--games", "-3"], ["--games", "0 or more", "-3"]),
        ([*SITE, "--rating", "1500", "--site-games", "-3"], ["--site-games", "0 or more"]),
        ([*SITE, "--rating", "1e9"], ["--rating", "0 to 4000"]),
    ],
)
def test_the_calculators_refuse_numbers_out_of_range(
    argv: list[str], words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    err = _one_sentence(argv, capsys)
    for word in words:
        assert word in err, err


def test_the_calculators_still_take_the_edges_of_the_range(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main([*ELO, "--rating", "4000", "--k", "100", "--json"]) == 0
    assert cli.main([*ELO, "--rating", "0", "--k", "0.5", "--json"]) == 0
    assert cli.main(["calc", "fide", "--rating", "1800", "--k", "20", "--game", "0:1"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("port", ["99999", "0", "-1", "http"])
def test_ui_refuses_a_port_that_does_not_exist(
    port: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _one_sentence(["ui", "--lake", str(tmp_path), "--port", port], capsys)
    assert "--port" in err and port in err


def test_ui_refuses_a_lake_that_does_not_exist_unless_asked_to_create_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    started: list[dict[str, str]] = []

    def call(cmd: object, cwd: object, env: dict[str, str]) -> int:
        started.append(env)
        return 0

    monkeypatch.setattr(cli.subprocess, "call", call)
    mistyped = tmp_path / "lkae"
    err = _one_sentence(["ui", "--lake", str(mistyped)], capsys)
    assert str(mistyped) in err and "--create" in err
    assert not started and not mistyped.exists()
    assert cli.main(["ui", "--lake", str(mistyped), "--create"]) == 0
    assert len(started) == 1


def test_ui_processes_print_no_library_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[dict[str, str]] = []
    monkeypatch.delenv("PYTHONWARNINGS", raising=False)
    monkeypatch.delenv("RATINGS_DEBUG", raising=False)

    def call(cmd: object, cwd: object, env: dict[str, str]) -> int:
        started.append(env)
        return 0

    monkeypatch.setattr(cli.subprocess, "call", call)
    assert cli.main(["ui", "--lake", str(tmp_path)]) == 0
    assert started[0]["PYTHONWARNINGS"] == "ignore"
    monkeypatch.setenv("RATINGS_DEBUG", "1")  # a developer sees everything
    assert cli.main(["ui", "--lake", str(tmp_path)]) == 0
    assert "PYTHONWARNINGS" not in started[1]


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as stop:
        cli.main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"ratings {version('rating-lists')}"


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_a_script_for_the_shell(
    shell: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["completion", shell]) == 0
    script = capsys.readouterr().out
    assert "ratings" in script and "_ARGCOMPLETE" in script


def test_completion_of_an_unknown_shell_is_one_sentence(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = _one_sentence(["completion", "powershell"], capsys)
    assert "bash" in err and "powershell" in err
