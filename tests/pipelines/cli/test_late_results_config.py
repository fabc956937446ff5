"""`ratings.toml`'s `[late_results]` (DESIGN §2, RULES §3.4): read from the working directory,
validated before any work (a bad value is one `ratings:` sentence naming the file, the key and
the value, exit 2), and applied without a note (no "not applied yet" any more)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.cli.errors import UserError
from pipelines.cli.late_results_config import check_late_results, read_late_results
from rating_core.systems.late_results import DEFAULT_POLICY
from tests.support.inbox import assert_one_sentence, ratings


def _write(folder: Path, text: str) -> Path:
    (folder / "ratings.toml").write_text(text, encoding="utf-8")
    return folder


def test_no_file_or_no_table_gives_the_defaults(tmp_path: Path) -> None:
    assert read_late_results(tmp_path) == (DEFAULT_POLICY, False)
    _write(tmp_path, 'lake = "elsewhere"\n')
    assert read_late_results(tmp_path) == (DEFAULT_POLICY, False)


def test_a_table_sets_its_families(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, '[late_results]\nfide = "revise"\nclub = "next_list"\n')
    policy, chosen = read_late_results(tmp_path)
    assert chosen and (policy.fide, policy.club, policy.ukd) == ("revise", "next_list", "revise")
    assert check_late_results(tmp_path) == policy
    assert capsys.readouterr().err == ""  # applied now: nothing to warn about


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[late_results]\nfide = "later"\n',
            'ratings.toml: [late_results] fide = "later" is not a policy (revise or next_list)',
        ),
        ('[late_results]\nchess = "revise"\n', "[late_results] chess is not a list family"),
        ('late_results = "revise"\n', "ratings.toml: late_results must be a table"),
        ("[late_results\n", "ratings.toml is not valid TOML"),
    ],
)
def test_a_bad_file_is_one_sentence(tmp_path: Path, text: str, message: str) -> None:
    _write(tmp_path, text)
    with pytest.raises(UserError) as caught:
        read_late_results(tmp_path)
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.e2e
@pytest.mark.parametrize("command", ["run", "preview"])
def test_run_and_preview_refuse_a_bad_value_before_any_work(tmp_path: Path, command: str) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    _write(tmp_path, '[late_results]\nukd = "sometimes"\n')
    proc = ratings(command, "--inbox", str(inbox), "--lake", str(tmp_path / "lake"), cwd=tmp_path)
    err = assert_one_sentence(proc)
    assert err == (
        f'ratings: {tmp_path / "ratings.toml"}: [late_results] ukd = "sometimes" is not a policy '
        "(revise or next_list)"
    )
    assert proc.returncode == 2
    assert not (tmp_path / "lake" / "lists").exists()
