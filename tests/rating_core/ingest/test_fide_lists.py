"""FIDE's official lists read safely (issue 32 items 3 and 8): the real FIDE lines kept field by
field, fixed-width columns checked, the XML read by a real streaming parser, zipped downloads,
lists without players, two lists for one month and files no reader takes."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import polars as pl
import pytest

from rating_core.ingest.common import UnreadableFileError
from rating_core.ingest.inbox import (
    check_starting_lists,
    ingest_starting_lists,
    unexpected_files,
)
from rating_core.ingest.registry import read_starting_list

EXTERNAL = Path(__file__).resolve().parents[3].parent / "shared" / "external" / "fide-lists"
REAL_BLITZ = EXTERNAL / "fide-blitz@2026-07.txt"

HEADER = (
    "ID Number      Name                                                         "
    "Fed Sex Tit  WTit OTit           FOA AUG26 Gms K  B-day Flag"
)


def fide_line(
    fideid: str, name: str, rating: str, *, fed: str = "TUR", sex: str = "M", k: str = "20"
) -> str:
    """A per-list line in FIDE's columns (ID 0, Name 15, Fed 76, Sex 80, rating 113, Gms 119,
    K 123, B-day 126, Flag 132), padded to FIDE's 136 characters."""
    chars = [" "] * 136
    for at, value in ((0, fideid), (15, name), (76, fed), (80, sex), (113, rating)):
        chars[at : at + len(value)] = list(value)
    for at, value in ((119, "0"), (123, k), (126, "1990")):
        chars[at : at + len(value)] = list(value)
    return "".join(chars)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.replace("\n", "\r\n").encode("ascii"))
    return path


@pytest.mark.skipif(not REAL_BLITZ.is_file(), reason="the shared external files are not here")
def test_the_real_fide_blitz_lines_are_read_keeping_every_field() -> None:
    result = read_starting_list(REAL_BLITZ, "federation/lists/fide-blitz@2026-07.txt")
    assert result.quarantine.height == 0
    rows = {r["player_id"]: r for r in result.rows.to_dicts()}
    assert set(rows) == {"703303", "700070", "537001345", "48701955"}
    leko, polgar = rows["703303"], rows["700070"]
    assert (leko["rating"], leko["federation"], leko["sex"], leko["title"]) == (
        2738,
        "HUN",
        "M",
        "GM",
    )
    assert (leko["birth_year"], leko["flag"]) == (1979, "i")
    assert (polgar["rating"], polgar["sex"], polgar["flag"], polgar["birth_year"]) == (
        2736,
        "F",
        "wi",
        1976,
    )
    gowda = rows["48701955"]
    assert (gowda["title"], gowda["w_title"], gowda["flag"], gowda["rating"]) == (
        "WCM",
        "WCM",
        "w",
        1807,
    )
    assert rows["537001345"]["flag"] is None and rows["537001345"]["title"] is None
    # K 10 says a published rating once reached 2400; K 40 of a junior says nothing of the count
    assert (leko["peak_rating"], gowda["peak_rating"]) == (2738, 1807)


def test_a_line_cut_inside_its_rating_column_is_quarantined_not_read_as_18(
    tmp_path: Path,
) -> None:
    good = fide_line("100", "Good, One", "1800")
    cut = fide_line("101", "Cut, Short", "1800")[:115]  # "18" of 1800, then the line ends
    text = "\n".join([HEADER, good, cut, fide_line("102", "Also, Good", "1900")]) + "\n"
    path = write(tmp_path, "fide-standard@2026-07.txt", text)
    result = read_starting_list(path, "lists/fide-standard@2026-07.txt")
    assert result.rows.select("player_id", "rating").rows() == [("100", 1800), ("102", 1900)]
    q = result.quarantine.select("line", "record", "value", "reason").rows()
    assert q == [
        (
            3,
            "101",
            "18",
            "the line is cut short: it ends at character 115, inside the AUG26 column "
            "(characters 114-119)",
        )
    ]


def test_a_value_running_into_the_next_column_is_quarantined(tmp_path: Path) -> None:
    shifted = fide_line("103", "Shifted, Three", "")
    shifted = shifted[:116] + "1800" + shifted[120:]  # three characters right of its column
    text = "\n".join([HEADER, fide_line("100", "Good, One", "1800"), shifted]) + "\n"
    result = read_starting_list(write(tmp_path, "fide-standard@2026-07.txt", text), "l.txt")
    assert result.rows.get_column("player_id").to_list() == ["100"]
    (reason,) = result.quarantine.get_column("reason").to_list()
    assert reason.startswith("the AUG26 value runs into the next column")


def test_a_header_only_txt_is_refused_in_one_sentence(tmp_path: Path) -> None:
    path = write(tmp_path, "fide-standard@2026-07.txt", HEADER + "\n\n")
    with pytest.raises(UnreadableFileError, match="holds its header and no player line"):
        read_starting_list(path, "fide-standard@2026-07.txt")


def test_an_xml_without_players_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "fide-standard@2026-07.xml", "<playerslist>\n</playerslist>\n")
    with pytest.raises(UnreadableFileError, match="holds no <player> element"):
        read_starting_list(path, "fide-standard@2026-07.xml")


XML = """<playerslist>
<!-- <player><fideid>999</fideid><rating>2800</rating><k>10</k></player> -->
<player id="1"><fideid>1503014</fideid><name>Carlsen, Magnus</name><country>NOR</country>
<sex>M</sex><title>GM</title><rating>2830</rating><games>9</games><k>10</k>
<birthday>1990</birthday><flag></flag></player>
<player><fideid>700070</fideid><name>Polgar, Judit</name><country>HUN</country><sex>F</sex>
<title>GM</title><rating>2675</rating><games>0</games><k>10</k><birthday>1976</birthday>
<flag>wi</flag></player>
</playerslist>
"""


def test_xml_is_parsed_as_xml_comments_and_attributes_included(tmp_path: Path) -> None:
    result = read_starting_list(write(tmp_path, "fide-standard@2026-07.xml", XML), "x.xml")
    assert result.quarantine.height == 0
    assert result.rows.select("player_id", "rating", "federation", "sex", "flag").rows() == [
        ("1503014", 2830, "NOR", "M", None),  # its attribute changes nothing
        ("700070", 2675, "HUN", "F", "wi"),
    ]  # and the player inside the comment is no player


def test_xml_entities_are_never_resolved(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("2999")
    text = (
        f'<!DOCTYPE playerslist [<!ENTITY x SYSTEM "file://{secret}">'
        '<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>\n'
        "<playerslist><player><fideid>1</fideid><name>&b;</name><rating>&x;</rating>"
        "<k>20</k></player><player><fideid>2</fideid><rating>1500</rating><k>20</k></player>"
        "</playerslist>"
    )
    result = read_starting_list(write(tmp_path, "fide-standard@2026-07.xml", text), "x.xml")
    # the external entity's 2999 is never read in: player 1 has no rating on this list
    assert result.rows.select("player_id", "rating").rows() == [("2", 1500)]
    assert "without a standard rating" in result.notes[0]


@pytest.mark.parametrize("suffix", [".txt", ".xml"])
def test_a_zipped_fide_download_is_read_as_it_comes(tmp_path: Path, suffix: str) -> None:
    inner = (
        "\r\n".join([HEADER, fide_line("100", "Good, One", "1800")]) + "\r\n"
        if suffix == ".txt"
        else XML
    )
    path = tmp_path / "fide-standard@2026-07.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"standard_rating_list{suffix}", inner)
    result = read_starting_list(path, "federation/lists/fide-standard@2026-07.zip")
    assert result.rows.height == (1 if suffix == ".txt" else 2)
    assert result.rows["list"].unique().to_list() == ["fide-standard"]


def test_a_zip_without_one_fide_list_is_one_sentence(tmp_path: Path) -> None:
    path = tmp_path / "fide-standard@2026-07.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("readme.pdf", b"%PDF")
    with pytest.raises(UnreadableFileError, match=r"exactly one \.txt or \.xml file"):
        read_starting_list(path, "fide-standard@2026-07.zip")
    path.write_bytes(b"not a zip")
    with pytest.raises(UnreadableFileError, match="not a readable zip archive"):
        read_starting_list(path, "fide-standard@2026-07.zip")


def test_two_lists_for_one_month_are_refused_before_any_work(tmp_path: Path) -> None:
    lists = tmp_path / "federation" / "lists"
    write(lists, "fide-standard@2026-07.txt", HEADER + "\n" + fide_line("1", "A", "1800") + "\n")
    write(lists, "fide-standard@2026-07.csv", "player_id,rating,rated_games\n1,1800,30\n")
    write(lists, "fide-rapid@2026-07.csv", "player_id,rating,rated_games\n1,1700,30\n")
    with pytest.raises(UnreadableFileError) as info:
        check_starting_lists(tmp_path)
    assert str(info.value) == (
        "'federation/lists/fide-standard@2026-07.csv' and "
        "'federation/lists/fide-standard@2026-07.txt' are both the fide-standard list after "
        "2026-07; keep the official one"
    )
    with pytest.raises(UnreadableFileError):
        ingest_starting_lists(tmp_path)


def test_files_no_reader_takes_are_named_in_a_note(tmp_path: Path) -> None:
    lists = tmp_path / "federation" / "lists"
    write(lists, "fide-standard@2026-07.csv", "player_id,rating,rated_games\n1,1800,30\n")
    write(lists, "standard_rating_list.rar", "x")
    write(tmp_path / "federation", "games.xlsx", "x")
    write(tmp_path / "federation", ".DS_Store", "x")
    assert unexpected_files(tmp_path) == [
        "federation/games.xlsx",
        "federation/lists/standard_rating_list.rar",
    ]
    batch = ingest_starting_lists(tmp_path)
    assert batch.rows.height == 1
    assert batch.notes[-1].startswith(
        "inbox: 2 files are not read, as no input is named so (federation/games.xlsx, "
        "federation/lists/standard_rating_list.rar)"
    )


def test_a_windows_1252_xml_is_read_with_a_note(tmp_path: Path) -> None:
    text = XML.replace("Carlsen, Magnus", "Carlsén, Magnus")
    path = tmp_path / "fide-standard@2026-07.xml"
    path.write_bytes(text.encode("cp1252"))
    result = read_starting_list(path, "x.xml")
    assert result.rows.height == 2
    assert result.notes == ("x.xml: not UTF-8; read as Windows-1252",)


def test_xml_is_read_in_batches_the_same_as_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    players = "".join(
        f"<player><fideid>{i}</fideid><rating>{1400 + i}</rating><k>20</k></player>\n"
        for i in range(1, 30)
    )
    path = write(tmp_path, "fide-blitz@2026-07.xml", f"<playerslist>\n{players}</playerslist>")
    whole = read_starting_list(path, "x.xml").rows
    monkeypatch.setattr("rating_core.ingest.fide_lists.XML_BATCH", 4)
    monkeypatch.setattr("rating_core.ingest.fide_lists.XML_CHUNK", 7)
    batched = read_starting_list(path, "x.xml").rows
    assert batched.height == 29
    assert batched.equals(whole)
    assert pl.Series(batched["rating"]).to_list() == [1400 + i for i in range(1, 30)]


BIG_XML_SCRIPT = """
import resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
from rating_core.ingest.registry import read_starting_list
result = read_starting_list(Path(sys.argv[1]), "big.xml")
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
print(result.rows.height, result.quarantine.height, peak)
"""


@pytest.mark.slow
def test_a_large_xml_is_streamed_under_an_8_gib_address_space_limit(tmp_path: Path) -> None:
    players = 300_000
    path = tmp_path / "fide-standard@2026-07.xml"
    with path.open("w", encoding="utf-8") as out:
        out.write("<playerslist>\n")
        for i in range(players):
            out.write(
                f"<player><fideid>{100000 + i}</fideid><name>Player, {i}</name>"
                f"<country>TUR</country><sex>M</sex><rating>{1400 + i % 1400}</rating>"
                f"<games>0</games><k>20</k><birthday>1990</birthday><flag></flag></player>\n"
            )
        out.write("</playerslist>\n")
    proc = subprocess.run(
        [sys.executable, "-c", BIG_XML_SCRIPT, str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows, quarantined, peak_mib = map(int, proc.stdout.split())
    assert (rows, quarantined) == (players, 0)
    assert peak_mib < 2048  # memory follows a batch of players, not the 300k
