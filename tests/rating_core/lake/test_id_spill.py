"""Tests of the id hashes a group's reading keeps on disk, and of the DuckDB questions asked of
them: the same answers as the arrays in memory give (issue 31 item 4)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rating_core import tables
from rating_core.ingest import pgn_stream
from rating_core.ingest.common import id_hashes, repeated_hashes
from rating_core.ingest.pgn_synth import generate_pgn
from rating_core.lake import ingest_store
from rating_core.lake.id_spill import HashSpill, hash_queries, spill_folder
from rating_core.lake.storage import read_table

_HASHES = st.lists(
    st.lists(st.integers(0, 2**64 - 1) | st.integers(0, 40), max_size=30), max_size=6
)


def _spill(folder: Path, name: str, parts: list[list[int]]) -> HashSpill:
    spill = HashSpill(folder, name)
    for part in parts:
        spill.append(np.array(part, dtype=np.uint64))
    return spill


@settings(max_examples=40, deadline=None)
@given(a=_HASHES, b=_HASHES)
def test_the_questions_answer_as_the_arrays_in_memory_do(
    a: list[list[int]], b: list[list[int]]
) -> None:
    with spill_folder() as folder, hash_queries(32 << 20) as queries:
        left, right = _spill(folder, "a", a), _spill(folder, "b", b)
        every_a = np.array([h for part in a for h in part], dtype=np.uint64)
        every_b = {h for part in b for h in part}
        assert left.count == every_a.size
        arrays = [np.array(part, dtype=np.uint64) for part in a]
        assert queries.repeated(left.files()) == repeated_hashes(arrays)
        assert queries.common(left.files(), right.files()) == set(every_a.tolist()) & every_b
        assert queries.any_common(left.files(), right.files()) == bool(
            set(every_a.tolist()) & every_b
        )
        batches = list(queries.sorted_batches(left.files()))
        got = (
            np.concatenate([batch.column(0).to_numpy() for batch in batches])
            if batches
            else np.empty(0, np.uint64)
        )
        assert got.dtype == np.uint64
        assert np.array_equal(got, np.sort(every_a))


def test_clear_starts_over() -> None:
    with spill_folder() as folder, hash_queries(32 << 20) as queries:
        spill = _spill(folder, "k", [[1, 2], [2]])
        spill.clear()
        assert spill.count == 0 and spill.files() == []
        spill.append(np.array([7, 7], dtype=np.uint64))
        assert queries.repeated(spill.files()) == {7}


def test_the_spill_folder_and_the_queries_leave_nothing_behind() -> None:
    with spill_folder() as folder, hash_queries(32 << 20) as queries:
        spill = _spill(folder, "k", [[3]])
        assert queries.repeated(spill.files()) == set()
    assert not folder.exists()


def test_a_streamed_group_keeps_its_id_hashes_on_disk(tmp_path: Path, monkeypatch) -> None:
    """Every id hash of a streamed file goes through spill files (none held in memory for
    the whole file), and the lake's sorted `ingest_ids` and the duplicate check still see them
    all: a month's ids cost the ingest's memory nothing that grows with its games."""
    monkeypatch.setattr(pgn_stream, "WINDOW_BYTES", 4_000)  # many windows
    inbox = tmp_path / "inbox"
    (inbox / "platform").mkdir(parents=True)
    games = 300
    generate_pgn(inbox / "platform" / "month.pgn", games, seed=2, n_players=40)
    appended: dict[str, int] = {}
    windows: list[int] = []
    real_append = HashSpill.append

    def counted(self: HashSpill, hashes: np.ndarray) -> None:
        appended[self.path.stem] = appended.get(self.path.stem, 0) + int(hashes.size)
        windows.append(int(hashes.size))
        real_append(self, hashes)

    monkeypatch.setattr(HashSpill, "append", counted)
    lake = tmp_path / "lake"
    outcome = ingest_store.ingest_games(inbox, lake)
    assert appended["kept"] == outcome.games > 0
    assert appended["split"] >= outcome.games
    assert max(windows) < games // 4  # a window's hashes at a time
    ids = read_table(lake, tables.INGEST_IDS).collect().get_column("hash").to_numpy()
    games_ids = read_table(lake, tables.GAMES).collect().get_column("game_id")
    assert np.array_equal(ids, np.sort(id_hashes(games_ids)))
    assert ingest_store.duplicate_game_ids(lake) == 0
