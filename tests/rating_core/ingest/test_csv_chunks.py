"""CSV files read a chunk of rows at a time (issue 31 item 2): whatever the chunk size, the rows,
line numbers and quarantine are those of the whole file read at once, and the ingest store
streams a platform CSV chunk by chunk."""

from __future__ import annotations

import random
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from rating_core import budget, tables
from rating_core.budget import MemoryBudget
from rating_core.ingest.common import IngestResult, UnreadableFileError
from rating_core.ingest.csv_games import (
    EARLIER,
    LINE,
    CsvChunks,
    read_csv_strings,
    read_federation_games,
    read_platform_games,
)
from rating_core.ingest.inbox import ingest_games as read_whole_inbox
from rating_core.ingest.registry import read_players
from rating_core.lake import ingest_store
from rating_core.lake.storage import read_table
from rating_core.progress import Progress, listening

WHOLE = 10**9
"""A chunk size no test file reaches: the whole file in one chunk."""

PLATFORM = "game_id,played_at,white_id,black_id,result,time_control,rated,kind,plies,termination"
FEDERATION = "game_id,tournament_id,round,played_on,white_id,black_id,result,rating_list"
PLAYERS = "player_id,name,federation,birth_date,is_bot,bot_rating"

_CELLS = [
    "g1",
    "g2",
    "g3",
    "",
    " ",
    "2024-03-01T10:00:00",
    "2024-02-30",
    "alice",
    "bob",
    "1-0",
    "0-1",
    "bye",
    "x",
    "300+3",
    "true",
    "maybe",
    "live",
    "40",
    "-3",
    "1990",
    "normal",
    "standard",
    '"a,b"',
    '"two\nlines"',
    '"q""q"',
    "\x00",
    "é",
    "\ufffd",
    "\r",
]


def _random_csv(rng: random.Random, header: str) -> bytes:
    """A CSV of a dozen rows drawn from good and bad cells: short and long rows, blank lines,
    quoted newlines, NUL bytes, repeated ids; sometimes bytes that are not UTF-8 or a BOM."""
    width = header.count(",") + 1
    lines = [header]
    for _ in range(rng.randint(0, 12)):
        count = rng.choice([0, 1, width - 1, width, width, width, width + 1, width + 2])
        lines.append(",".join(rng.choice(_CELLS) for _ in range(count)))
    data = ("\n".join(lines) + rng.choice(["", "\n", "\n\n"])).encode()
    if rng.random() < 0.3:
        data = data.replace("é".encode(), b"\xe9")  # Latin-1: not UTF-8
    if rng.random() < 0.1:
        data = b"\xef\xbb\xbf" + data
    return data


def _read(read, path: Path, rows: int) -> IngestResult | str:
    try:
        return read(path, "f.csv", rows)
    except UnreadableFileError as exc:
        return str(exc)


def _assert_same(chunked: IngestResult | str, whole: IngestResult | str) -> None:
    if isinstance(whole, str) or isinstance(chunked, str):
        assert chunked == whole
        return
    assert_frame_equal(chunked.rows, whole.rows)
    assert_frame_equal(chunked.quarantine, whole.quarantine)
    assert chunked.notes == whole.notes


@pytest.mark.slow
@pytest.mark.parametrize(
    ("reader", "header"),
    [
        (read_platform_games, PLATFORM),
        (read_federation_games, FEDERATION),
        (read_players, PLAYERS),
    ],
    ids=["platform", "federation", "players"],
)
def test_chunked_reading_equals_whole_reading_on_generated_files(
    tmp_path: Path, reader, header: str
) -> None:
    rng = random.Random(31)
    for case in range(60):
        path = tmp_path / f"case{case}.csv"
        path.write_bytes(_random_csv(rng, header))
        whole = _read(reader, path, WHOLE)
        for rows in (1, 2, 3):
            _assert_same(_read(reader, path, rows), whole)


def test_the_text_table_is_the_same_in_chunks(tmp_path: Path) -> None:
    rng = random.Random(7)
    for case in range(40):
        path = tmp_path / f"case{case}.csv"
        path.write_bytes(_random_csv(rng, PLATFORM))
        try:
            whole = read_csv_strings(path, "f.csv", WHOLE)
        except UnreadableFileError as exc:
            with pytest.raises(UnreadableFileError, match="^" + str(exc) + "$"):
                read_csv_strings(path, "f.csv", 2)
            continue
        for rows in (1, 2, 5):
            chunked = read_csv_strings(path, "f.csv", rows)
            assert chunked.columns == whole.columns
            assert_frame_equal(chunked.frame, whole.frame)


def test_line_numbers_count_from_the_file_start_across_chunks(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text(
        f"{PLATFORM}\n"
        'g1,2024-03-01,a,b,1-0,300,true,live,40,"a\nb\nc"\n'  # lines 2-4
        "\n"  # line 5: blank, skipped
        "g2,2024-03-01,a,b,1-0,300,true,live,40,normal\n"  # line 6
        'g3,2024-03-01,a,b,1-0,300,true,live,40,"x\r\ny"\n'  # lines 7-8
        "g4,2024-03-01,a,b,1-0,300,true,live,40,normal\n"  # line 9
    )
    for rows in (1, 2, WHOLE):
        chunks = list(CsvChunks(path, "p.csv", rows).tables())
        lines = pl.concat([c.frame for c in chunks]).get_column(LINE).to_list()
        assert lines == [2, 6, 7, 9], rows
    assert len(list(CsvChunks(path, "p.csv", 1).tables())) > 1  # really read in chunks


def _platform_rows(*ids: str) -> str:
    return "".join(
        f"{gid},2024-03-0{1 + i % 9},a,b,1-0,300+3,true,live,40,normal\n"
        for i, gid in enumerate(ids)
    )


def test_a_game_id_repeated_across_chunks_is_quarantined_as_within_one(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    # g1 on lines 2, 5 and 7; g2 on 3 and (with a bad result, its own reason first) on 6
    text = PLATFORM + "\n" + _platform_rows("g1", "g2", "g3", "g1")
    text += "g2,2024-03-01,a,b,2-0,300,true,live,40,normal\n" + _platform_rows("g1")
    path.write_text(text)
    whole = read_platform_games(path, "p.csv", WHOLE)
    expected = {
        5: "game id 'g1' appears again (first on line 2)",
        6: "result '2-0' is not one of 1-0, 0-1, 1/2-1/2",
        7: "game id 'g1' appears again (first on line 2)",
    }
    reasons = dict(zip(whole.quarantine["line"], whole.quarantine["reason"], strict=True))
    assert reasons == expected
    for rows in (1, 2, 3):
        _assert_same(read_platform_games(path, "p.csv", rows), whole)


def test_a_repeat_of_a_quarantined_first_record_names_its_line(tmp_path: Path) -> None:
    """The first record of an id counts even when it is itself quarantined, in any chunk."""
    path = tmp_path / "p.csv"
    path.write_text(
        PLATFORM
        + "\ng1,not-a-date,a,b,1-0,300,true,live,40,normal\n"
        + _platform_rows("g2", "g3", "g1")
    )
    for rows in (1, WHOLE):
        result = read_platform_games(path, "p.csv", rows)
        assert result.quarantine["reason"].to_list()[-1] == (
            "game id 'g1' appears again (first on line 2)"
        )
        assert result.rows["game_id"].to_list() == ["g2", "g3"]


def test_each_chunk_says_which_ids_it_holds_and_a_repeat_is_marked(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text(PLATFORM + "\n" + _platform_rows("g1", "g1", "g2", "g1", ""))
    chunks = CsvChunks(path, "p.csv", 2, "game_id")
    frames = [t.frame for t in chunks.tables()]
    # the header is the first chunk's first row: g1 | g1 g2 | g1 and an empty id
    assert [h.size for h in chunks.hashes] == [1, 2, 1]  # distinct non-empty ids per chunk
    assert all(f.get_column(EARLIER).is_null().all() for f in frames)
    again = frozenset(chunks.hashes[0].tolist())
    marked = CsvChunks(path, "p.csv", 2, "game_id", again)
    earlier = pl.concat([t.frame for t in marked.tables()]).get_column(EARLIER).to_list()
    assert earlier == [None, 2, None, 2, None]  # g1 of lines 3 and 5: first on line 2


def test_a_unicode_replacement_character_is_not_a_bad_byte_in_a_utf8_file(tmp_path: Path) -> None:
    good = tmp_path / "good.csv"
    good.write_text(PLATFORM + "\n" + _platform_rows("g\ufffd1", "g2"))
    bad = tmp_path / "bad.csv"
    bad.write_bytes(good.read_bytes() + b"g3\xff,2024-03-01,a,b,1-0,300,true,live,40,normal\n")
    for rows in (1, WHOLE):
        assert read_platform_games(good, "good.csv", rows).quarantine.height == 0
        # in a file that is not UTF-8, the character cannot be told from a replaced byte
        quarantined = read_platform_games(bad, "bad.csv", rows).quarantine
        assert quarantined["line"].to_list() == [2, 4]
        assert set(quarantined["reason"]) == {"the line holds bytes that are not UTF-8"}


@pytest.mark.parametrize(
    ("content", "sentence"),
    [
        (b"", "p.csv: the file is empty"),
        (b"\xef\xbb\xbf \n\n", "p.csv: the file is empty"),
        (b"game_id,\x00x\nrow\n", "p.csv: not a CSV text file (it contains NUL bytes)"),
        (b" \n1,2\n", "p.csv: the header row is empty"),
        (b"a,b,a\n1,2,3\n", "p.csv: column 'a' appears twice in the header"),
    ],
)
def test_unreadable_files_are_refused_with_the_same_sentence(
    tmp_path: Path, content: bytes, sentence: str
) -> None:
    path = tmp_path / "p.csv"
    path.write_bytes(content)
    for rows in (1, WHOLE):
        with pytest.raises(UnreadableFileError) as caught:
            read_csv_strings(path, "p.csv", rows)
        assert str(caught.value) == sentence


def test_a_nul_byte_after_the_first_line_is_a_cell_not_a_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_bytes(f"{PLATFORM}\n".encode() + b"g1\x00,2024-03-01,a,b,1-0,300,true,live,40,\n")
    quarantine = read_platform_games(path, "p.csv", 1).quarantine
    assert quarantine["reason"].to_list() == ["the line holds a NUL byte (column game_id)"]


def test_a_budget_reads_fewer_rows_at_a_time() -> None:
    assert MemoryBudget().csv_rows == budget.CSV_ROWS
    assert MemoryBudget(512 * 1024**2).csv_rows == 16_384
    assert MemoryBudget(budget.LEAST_MEMORY).csv_rows == 10_000
    assert MemoryBudget(64 * 1024**3).csv_rows == budget.CSV_ROWS


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort(pl.all(), nulls_last=True)


def test_the_store_streams_a_platform_csv_and_keeps_what_a_whole_reading_keeps(
    tmp_path: Path, monkeypatch
) -> None:
    inbox, lake = tmp_path / "inbox", tmp_path / "lake"
    (inbox / "platform").mkdir(parents=True)
    ids = [f"g{i}" for i in range(12)]
    (inbox / "platform" / "games.csv").write_text(
        PLATFORM + "\n" + _platform_rows(*ids, "g3", "g11", "") + _platform_rows("g3")
    )
    chunks: list[int] = []
    real = ingest_store._GroupSink._keep

    def counted(sink, piece):
        chunks.append(piece.rows.height + piece.quarantine.height)
        return real(sink, piece)

    monkeypatch.setattr(ingest_store._GroupSink, "_keep", counted)
    monkeypatch.setattr(MemoryBudget, "csv_rows", property(lambda self: 4))
    reports: list[Progress] = []
    with listening(reports.append):
        outcome = ingest_store.ingest_games(inbox, lake, budget=MemoryBudget())
    last = reports[-1]
    assert (last.label, last.done, last.unit, last.games, last.finished) == (
        "platform/games.csv",
        17,
        "lines",
        12,
        True,
    )
    # 17 rows with the header, 4 at a time; read twice: the repeats across chunks found first
    assert chunks == [3, 4, 4, 4, 1] * 2
    assert outcome.games == 12 and outcome.quarantined == 4
    whole = read_whole_inbox(inbox)
    games = read_table(lake, tables.GAMES).collect().select(whole.rows.columns)
    assert _sorted(games).equals(_sorted(whole.rows))
    quarantine = read_table(lake, tables.QUARANTINE).collect().drop(tables.SOURCE)
    assert _sorted(quarantine).equals(_sorted(whole.quarantine))
    assert sorted(quarantine["reason"].to_list()) == [
        "game id 'g11' appears again (first on line 13)",
        "game id 'g3' appears again (first on line 5)",
        "game id 'g3' appears again (first on line 5)",
        "the game id is empty",
    ]
