"""Tests of the streamed PGN reading: windows cut at game boundaries give exactly the whole
file's rows, archives are read across frames and refused when cut anywhere (issue 31 item 2)."""

from __future__ import annotations

import gzip
import io
from collections.abc import Generator
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import zstandard

from rating_core.ingest.common import UnreadableFileError
from rating_core.ingest.pgn import pgn_windows, read_pgn, read_pgn_reference
from rating_core.ingest.pgn_files import check_zstd_frames, open_stream
from rating_core.ingest.pgn_stream import last_game_start, windows
from rating_core.ingest.pgn_synth import generate_pgn
from rating_core.progress import Progress, listening

EXTERNAL = Path(__file__).resolve().parents[4] / "shared" / "external" / "shakmaty"


def _game(i: int, site: str | None = None) -> str:
    site = site or f"https://lichess.org/g{i:07d}"
    return (
        f'[Event "Rated Blitz game"]\n[Site "{site}"]\n[UTCDate "2025.05.01"]\n'
        f'[UTCTime "10:00:{i % 60:02d}"]\n[White "w{i}"]\n[Black "b{i}"]\n[Result "1-0"]\n'
        '[TimeControl "180+2"]\n\n1. e4 { [%clk 0:03:00] } 1... e5 2. Qh5 1-0\n\n'
    )


def _same(a, b) -> None:
    assert a.rows.equals(b.rows)
    assert a.quarantine.equals(b.quarantine)
    assert a.notes == b.notes


@pytest.mark.slow
@pytest.mark.parametrize("window", [256, 700, 4096, 1 << 16])
def test_windows_give_the_whole_files_rows(tmp_path: Path, window: int) -> None:
    path = generate_pgn(tmp_path / "g.pgn", 300, seed=3, extras=True)
    whole = read_pgn(path, "g.pgn", window=1 << 26)
    _same(read_pgn(path, "g.pgn", window=window), whole)
    assert whole.rows.height > 250


@pytest.mark.slow
@pytest.mark.skipif(not EXTERNAL.is_dir(), reason="needs ../shared/external/shakmaty")
@pytest.mark.parametrize("name", ["lichess_db_1000k.pgn", "twic1599_1000k.pgn"])
def test_windows_agree_with_python_chess_on_real_files(name: str) -> None:
    path = EXTERNAL / name
    streamed = read_pgn(path, name, window=5000)
    reference = read_pgn_reference(path, name)
    assert (
        streamed.rows.get_column("game_id").to_list() == reference.get_column("game_id").to_list()
    )
    _same(streamed, read_pgn(path, name, window=1 << 26))


def test_a_game_id_repeated_in_another_window_is_quarantined_naming_the_first(
    tmp_path: Path,
) -> None:
    text = "".join(_game(i) for i in range(40)) + _game(99, "https://lichess.org/g0000003")
    path = tmp_path / "dup.pgn"
    path.write_text(text)
    result = read_pgn(path, "dup.pgn", window=512)
    assert result.rows.height == 40
    [reason] = result.quarantine.get_column("reason").to_list()
    assert reason == "game id 'g0000003' already appears at line 34"
    assert result.quarantine.get_column("line").item() == 40 * 11 + 1


def _repeating_file(path: Path) -> Path:
    """60 copies of one game, then games among which two ids recur in every window: the file
    of the audit (issue 31 item 2), where each window named its own first copy."""
    copies = [_game(1) for _ in range(60)]
    mixed = [
        game
        for i in range(40)
        for game in (_game(200 + i, f"https://lichess.org/g000000{i % 2 + 7}"), _game(300 + i))
    ]
    path.write_text("".join(copies + mixed))
    return path


@pytest.mark.parametrize("window", [512, 2000, 4096])
def test_every_repeat_in_any_window_names_the_files_first_record(
    tmp_path: Path, window: int
) -> None:
    path = _repeating_file(tmp_path / "dup.pgn")
    whole = read_pgn(path, "dup.pgn", window=1 << 26)
    reasons = whole.quarantine.get_column("reason").value_counts(sort=True)
    assert reasons.rows() == [
        ("game id 'g0000001' already appears at line 1", 59),
        ("game id 'g0000007' already appears at line 661", 19),
        ("game id 'g0000008' already appears at line 683", 19),
    ]
    _same(read_pgn(path, "dup.pgn", window=window), whole)


def test_a_game_longer_than_the_window_grows_it(tmp_path: Path) -> None:
    long = _game(1).replace("1. e4", "{ " + "x" * 5000 + " } 1. e4")
    path = tmp_path / "long.pgn"
    path.write_text(_game(0) + long + _game(2))
    assert read_pgn(path, "long.pgn", window=256).rows.height == 3


def test_bom_and_windows_1252_are_read_as_whole_files_are(tmp_path: Path) -> None:
    text = "".join(_game(i) for i in range(30)).replace("w7", "Müller")
    path = tmp_path / "legacy.pgn"
    path.write_bytes(b"\xef\xbb\xbf" + text.replace("Müller", "M\xfcller").encode("cp1252"))
    whole = read_pgn(path, "legacy.pgn", window=1 << 26)
    assert whole.notes == ("legacy.pgn: not UTF-8, read as Windows-1252",)
    assert "Müller" in whole.rows.get_column("white_name").to_list()
    _same(read_pgn(path, "legacy.pgn", window=600), whole)


def test_nul_bytes_are_found_in_every_window(tmp_path: Path) -> None:
    text = "".join(_game(i) for i in range(30)).replace('"w25"', '"w\x0025"')
    path = tmp_path / "nul.pgn"
    path.write_text(text)
    whole = read_pgn(path, "nul.pgn", window=1 << 26)
    assert whole.quarantine.get_column("line").to_list() == [25 * 11 + 5]
    _same(read_pgn(path, "nul.pgn", window=500), whole)


def test_last_game_start_is_the_last_cut_the_scanner_would_make() -> None:
    text = (_game(0) + _game(1) + _game(2)).encode()
    buf = np.frombuffer(text, dtype=np.uint8)
    assert last_game_start(buf, len(text)) == len((_game(0) + _game(1)).encode())
    assert last_game_start(buf, 10) == -1


def _zst(text: bytes, frames: int = 3, **params: int) -> bytes:
    """`text` as a zstd archive of `frames` frames (streamed: no content size in the header)."""
    out = io.BytesIO()
    size = -(-len(text) // frames)
    compressor = zstandard.ZstdCompressor(
        compression_params=zstandard.ZstdCompressionParameters.from_level(3, **params)
    )
    for k in range(frames):
        with compressor.stream_writer(out, closefd=False) as writer:
            writer.write(text[k * size : (k + 1) * size])
    return out.getvalue()


def test_a_multi_frame_zstd_archive_is_read_whole(tmp_path: Path) -> None:
    text = "".join(_game(i) for i in range(200)).encode()
    path = tmp_path / "g.pgn.zst"
    path.write_bytes(_zst(text, frames=5))
    plain = tmp_path / "g.pgn"
    plain.write_bytes(text)
    result = read_pgn(path, "g.pgn", window=2000)
    _same(result, read_pgn(plain, "g.pgn"))
    assert result.rows.height == 200


def test_a_long_window_frame_is_read_and_one_over_the_limit_refused_by_name(
    tmp_path: Path,
) -> None:
    text = "".join(_game(i) for i in range(50)).encode()
    path = tmp_path / "long.pgn.zst"
    path.write_bytes(_zst(text, frames=1, window_log=28, enable_ldm=1))
    assert read_pgn(path, "long.pgn.zst").rows.height == 50
    with pytest.raises(UnreadableFileError, match=r"asks for a 256 MiB window, over the 8 MiB"):
        check_zstd_frames(path, "long.pgn.zst", window_max=8 << 20)


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".zst", ".gz"])
def test_an_archive_cut_anywhere_is_refused_in_one_sentence(tmp_path: Path, suffix: str) -> None:
    text = "".join(_game(i) for i in range(8)).encode()
    data = _zst(text, frames=2) if suffix == ".zst" else gzip.compress(text)
    # a cut between two frames leaves a complete archive of fewer frames: zstd cannot tell it
    whole_frames = {len(_zst(text[: -(-len(text) // 2)], frames=1))} if suffix == ".zst" else set()
    for cut in sorted(set(range(len(data))) - whole_frames):
        path = tmp_path / f"cut{cut}.pgn{suffix}"
        path.write_bytes(data[:cut])
        with pytest.raises(UnreadableFileError, match="truncated or corrupt"):
            read_pgn(path, path.name)
        path.unlink()


def test_windows_stop_the_reader_thread_when_abandoned(tmp_path: Path) -> None:
    path = tmp_path / "g.pgn"
    path.write_text("".join(_game(i) for i in range(200)))
    with open_stream(path, "g.pgn") as stream:
        reading = windows(stream, 512)
        assert isinstance(reading, Generator)  # a generator, which `close()` stops
        first = next(reading)
        assert first.shape[0] <= 512
        reading.close()  # the read-ahead thread ends; nothing hangs


def test_a_pgn_of_only_blank_lines_is_noted_empty(tmp_path: Path) -> None:
    path = tmp_path / "blank.pgn"
    path.write_text("\n \n\n")
    result = read_pgn(path, "blank.pgn", window=256)
    assert result.notes == ("blank.pgn: empty, no games",)
    assert isinstance(result.rows, pl.DataFrame) and result.rows.height == 0


def test_a_hostile_archive_is_refused_by_the_budgets_rule_in_bounded_memory(
    tmp_path: Path,
) -> None:
    """A few kilobytes of zstd that expand to 300 MB of one byte: refused by the rule on the
    longest stretch without a game, with the window never grown past an eighth of the budget."""
    from rating_core.budget import MemoryBudget
    from rating_core.ingest.pgn import pgn_windows

    out = io.BytesIO()
    with zstandard.ZstdCompressor().stream_writer(out, closefd=False) as writer:
        block = b"x" * (1 << 20)
        for _ in range(300):
            writer.write(block)
    path = tmp_path / "bomb.pgn.zst"
    path.write_bytes(out.getvalue())
    assert path.stat().st_size < 100_000
    budget = MemoryBudget(256 << 20)
    with pytest.raises(UnreadableFileError, match=r"bomb.pgn.zst: over 32 MiB of text without"):
        for _ in pgn_windows(path, "bomb.pgn.zst", budget=budget):
            pass


def test_a_streamed_file_reports_at_once_and_when_it_is_read(tmp_path: Path) -> None:
    """Its row shows while its first window is still being read (0 of its size), and its last
    report says every byte and game."""
    path = tmp_path / "g.pgn"
    path.write_text("".join(_game(i) for i in range(40)))
    reports: list[Progress] = []
    with listening(reports.append):
        games = sum(r.rows.height for _, r in pgn_windows(path, "g.pgn", window=2048))
    size = path.stat().st_size
    assert games == 40
    first, last = reports[0], reports[-1]
    assert (first.done, first.total, first.unit, first.games, first.finished) == (
        0,
        size,
        "bytes",
        0,
        False,
    )
    assert (last.done, last.total, last.games, last.finished) == (size, size, 40, True)
    assert all(r.label == "g.pgn" and r.stage == "ingest" for r in reports)
