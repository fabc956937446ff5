"""`--lake` / `--inbox` defaults: the command line over RATINGS_LAKE / RATINGS_INBOX over
`ratings.toml` over the built-in defaults, and a bad value as one sentence naming the file, the
key and the value (DESIGN §2 "Configuration", issue 33 item 6)."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import pytest

from pipelines.cli import config
from pipelines.cli.app import build_parser, main
from pipelines.cli.errors import UserError
from rating_core.systems.late_results import DEFAULT_POLICY


@pytest.fixture(autouse=True)
def _clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test in an empty working directory, with no RATINGS_* variable set."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(config.LAKE_ENV, raising=False)
    monkeypatch.delenv(config.INBOX_ENV, raising=False)


def _parsed(*argv: str) -> argparse.Namespace:
    args = build_parser(argv[0]).parse_args(list(argv))
    config.apply(args)
    return args


def test_built_in_defaults_without_file_or_environment() -> None:
    args = _parsed("run")
    assert (args.lake, args.inbox) == ("lake", "data_samples")


def test_the_file_then_the_environment_then_the_command_line_win(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / config.CONFIG_FILE).write_text(
        'lake = "file-lake"\ninbox = "file-inbox"\n', encoding="utf-8"
    )
    assert (_parsed("run").lake, _parsed("run").inbox) == ("file-lake", "file-inbox")
    monkeypatch.setenv(config.LAKE_ENV, "env-lake")
    args = _parsed("run")
    assert (args.lake, args.inbox) == ("env-lake", "file-inbox")
    monkeypatch.setenv(config.INBOX_ENV, "env-inbox")
    args = _parsed("run", "--lake", "cli-lake")
    assert (args.lake, args.inbox) == ("cli-lake", "env-inbox")
    args = _parsed("run", "--inbox", "cli-inbox")
    assert (args.lake, args.inbox) == ("env-lake", "cli-inbox")


@pytest.mark.parametrize(
    "command", [["show"], ["query", "SELECT 1"], ["report", "--output", "r.html"], ["ui"]]
)
def test_every_command_with_a_lake_takes_the_default(
    command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(config.LAKE_ENV, "env-lake")
    assert _parsed(*command).lake == "env-lake"


def test_the_calculators_read_no_configuration(tmp_path: Path) -> None:
    (tmp_path / config.CONFIG_FILE).write_text("not toml at all [", encoding="utf-8")
    args = _parsed("calc", "elo", "--rating", "1500", "--opponent", "1500", "--result", "1")
    assert not hasattr(args, "lake")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("lake = 3\n", ["ratings.toml", "lake", "3"]),
        ('lake = ""\n', ["ratings.toml", "lake", "''"]),
        ('lake = "s3://bucket/lake"\n', ["ratings.toml", "lake", "s3://bucket/lake"]),
        ('lakes = "x"\n', ["ratings.toml", "unknown key 'lakes'"]),
        ("late_results = 1\n", ["ratings.toml", "late_results", "1"]),
        ('[late_results]\nchess = "revise"\n', ["ratings.toml", "chess", "fide"]),
        ('[late_results]\nfide = "later"\n', ["ratings.toml", "[late_results] fide", '"later"']),
        ("lake = [\n", ["ratings.toml", "not valid TOML"]),
    ],
)
def test_a_bad_file_is_one_sentence_naming_file_key_and_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, words: list[str]
) -> None:
    (tmp_path / config.CONFIG_FILE).write_text(text, encoding="utf-8")
    assert main(["show"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ratings: ") and "\n" not in err, err
    for word in words:
        assert word in err, err
    assert "Error" not in err and "tomllib" not in err


def test_a_bad_environment_value_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(config.LAKE_ENV, "s3://bucket/lake")
    assert main(["show"]) == 2
    err = capsys.readouterr().err
    assert config.LAKE_ENV in err and "s3://bucket/lake" in err


def test_late_results_defaults_and_choices(tmp_path: Path) -> None:
    assert config.load(environ={}, folder=tmp_path).late_results == DEFAULT_POLICY
    assert DEFAULT_POLICY.fide == "next_list"  # RULES §3.4: FIDE never revises
    (tmp_path / config.CONFIG_FILE).write_text(
        '[late_results]\nfide = "revise"\nclub = "next_list"\n', encoding="utf-8"
    )
    chosen = config.load(environ={}, folder=tmp_path).late_results
    assert chosen == replace(DEFAULT_POLICY, fide="revise", club="next_list")


def test_the_settings_say_where_each_value_came_from(tmp_path: Path) -> None:
    (tmp_path / config.CONFIG_FILE).write_text('lake = "l"\n', encoding="utf-8")
    settings = config.load(environ={config.INBOX_ENV: "i"}, folder=tmp_path)
    assert settings.sources == {
        "lake": str(tmp_path / config.CONFIG_FILE),
        "inbox": "RATINGS_INBOX",
    }


def test_a_folder_named_like_the_file_is_one_sentence(tmp_path: Path) -> None:
    (tmp_path / config.CONFIG_FILE).mkdir()
    with pytest.raises(UserError, match="is a folder"):
        config.load(environ={}, folder=tmp_path)
