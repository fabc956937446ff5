"""End to end: a platform games file removed or changed since a list's last publication is
named by the new version, in its reason and its diff, as a federation tournament is (issue 31
item 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rating_core.lake import publishing as publish
from tests.support.inbox import ratings
from tests.support.pgn_text import blitz_game, write_pgn

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _run(inbox: Path, lake: Path) -> None:
    done = ratings("run", "--inbox", str(inbox), "--lake", str(lake))
    assert done.returncode == 0, done.stderr


def _latest(lake: Path) -> tuple[int, str, list[str]]:
    """The site-elo list of May 2025: its latest version, that version's reason and causes."""
    version = publish.latest_version(lake, "site-elo", "2025-05")
    assert version is not None
    reason = publish.read_manifest(lake, "site-elo", "2025-05", version)["reason"]
    diff = publish.read_diff(lake, "site-elo", "2025-05", version)
    return version, reason, diff.get_column("cause").unique().sort().to_list()


def test_a_removed_and_a_changed_platform_file_are_named(tmp_path: Path) -> None:
    inbox, lake = tmp_path / "inbox", tmp_path / "lake"
    games = [blitz_game(i) for i in range(12)]
    write_pgn(inbox / "platform" / "a.pgn", games)
    write_pgn(inbox / "platform" / "b.pgn", [blitz_game(100 + i, day=3) for i in range(12)])
    _run(inbox, lake)
    assert _latest(lake)[0] == 1

    (inbox / "platform" / "b.pgn").unlink()
    _run(inbox, lake)
    version, reason, causes = _latest(lake)
    assert version == 2
    assert reason.endswith("; withdrawn: games file platform/b.pgn"), reason
    assert causes == ["withdrawn: games file platform/b.pgn"]

    write_pgn(inbox / "platform" / "a.pgn", [*games, blitz_game(50, "w1", "b1", day=2)])
    _run(inbox, lake)
    version, reason, causes = _latest(lake)
    assert version == 3
    assert reason.endswith("; changed results: games file platform/a.pgn"), reason
    assert causes == ["changed results: games file platform/a.pgn"]
    assert "platform/b.pgn" not in reason  # named by the version after its removal only
    manifest = publish.read_manifest(lake, "site-elo", "2025-05", 1)
    assert "games file" not in manifest["reason"]  # a first publication names no file
