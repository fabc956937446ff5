"""FIDE's TXT and XML list formats: the layout found in public parsers of FIDE's downloads and
the readers of starting lists in those formats (K → career count and peak); the writers are
tested in test_export.py."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from rating_core.ingest.common import UnreadableFileError
from rating_core.ingest.inbox import ingest_starting_lists
from rating_core.ingest.registry import read_starting_list
from rating_core.systems.fide.formats import txt_header, txt_layout

# FIDE's per-list header as it appears in the January 2023 standard_rating_list.txt (quoted by
# several public parsers of the download), and the 0-based column starts those parsers use.
FIDE_HEADER_JAN23 = (
    "ID Number      Name                                                         "
    "Fed Sex Tit  WTit OTit           FOA JAN23 Gms K  B-day Flag"
)
STARTS = {
    "id": 0,
    "name": 15,
    "fed": 76,
    "sex": 80,
    "tit": 84,
    "wtit": 89,
    "otit": 94,
    "foa": 109,
    "rating": 113,
    "gms": 119,
    "k": 123,
    "bday": 126,
    "flag": 132,
}
COMBINED_HEADER = (
    "ID Number      Name                                                         "
    "Fed Sex Tit  WTit OTit           FOA SRtng SGm SK RRtng RGm Rk BRtng BGm BK B-day Flag"
)
COMBINED_STARTS = {
    "id": 0,
    "name": 15,
    "fed": 76,
    "sex": 80,
    "tit": 84,
    "srtng": 113,
    "sgm": 119,
    "sk": 123,
    "rrtng": 126,
    "rgm": 132,
    "rk": 136,
    "brtng": 139,
    "bgm": 145,
    "bk": 149,
    "bday": 152,
    "flag": 158,
}


def line(starts: dict[str, int], **values: str) -> str:
    """A FIDE line with each value put at its documented column (the way FIDE's file is laid
    out), independently of the code under test."""
    chars = [" "] * 170
    for field, value in values.items():
        at = starts[field]
        chars[at : at + len(value)] = list(value)
    return "".join(chars).rstrip()


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def by_id(frame: pl.DataFrame) -> dict[str, dict]:
    return {row["player_id"]: row for row in frame.to_dicts()}


def test_header_is_fides_layout() -> None:
    assert txt_header("2022-12") == FIDE_HEADER_JAN23
    assert [c.start for c in txt_layout(FIDE_HEADER_JAN23)] == list(STARTS.values())
    assert [c.start for c in txt_layout(COMBINED_HEADER)][:5] == [0, 15, 76, 80, 84]
    combined = {c.label: c.start for c in txt_layout(COMBINED_HEADER)}
    assert combined["RRtng"] == 126 and combined["BK"] == 149 and combined["Flag"] == 158


def test_hand_written_fide_lines_read_with_k_as_career_and_peak(tmp_path: Path) -> None:
    lines = [
        FIDE_HEADER_JAN23,
        # K 20: has completed 30 games; the peak is the rating
        line(
            STARTS,
            id="5045886",
            name="A K, Kalshyan",
            fed="IND",
            sex="M",
            rating="1671",
            gms="0",
            k="20",
            bday="1964",
        ),
        # K 10 under 2400: a published rating once reached 2400
        line(
            STARTS,
            id="1503014",
            name="Old, Master",
            fed="NOR",
            sex="M",
            tit="GM",
            rating="2350",
            gms="9",
            k="10",
            bday="1950",
        ),
        # K 40, not a junior: fewer than 30 games, taken as max(5, Gms)
        line(
            STARTS,
            id="1503016",
            name="Adult, New",
            fed="NOR",
            sex="M",
            rating="1700",
            gms="7",
            k="40",
            bday="1980",
        ),
        line(
            STARTS,
            id="1503017",
            name="Adult, Newer",
            fed="NOR",
            sex="F",
            rating="1650",
            gms="0",
            k="40",
            bday="1981",
            flag="wi",
        ),
        # K 40 of a junior (born 2012, 18 in 2030, under 2300): the age explains it
        line(
            STARTS,
            id="1503015",
            name="Junior, Kid",
            fed="NOR",
            sex="M",
            rating="1900",
            gms="4",
            k="40",
            bday="2012",
        ),
        "",
    ]
    path = write(tmp_path, "fide-standard@2022-12.txt", "\n".join(lines))
    result = read_starting_list(path, "federation/lists/fide-standard@2022-12.txt")
    assert result.quarantine.height == 0
    rows = by_id(result.rows)
    assert set(rows) == {"5045886", "1503014", "1503016", "1503017", "1503015"}
    assert rows["5045886"] | {} == {
        "list": "fide-standard",
        "period": "2022-12",
        "player_id": "5045886",
        "rating": 1671,
        "rated_games": 30,
        "peak_rating": 1671,
        "name": "A K, Kalshyan",
        "birth_year": 1964,
        "federation": "IND",
        "sex": "M",
        "title": None,
        "w_title": None,
        "o_title": None,
        "foa_title": None,
        "flag": None,
    }
    assert rows["1503014"]["title"] == "GM"
    assert (rows["1503017"]["sex"], rows["1503017"]["flag"]) == ("F", "wi")
    assert (rows["1503014"]["rating"], rows["1503014"]["peak_rating"]) == (2350, 2400)
    assert rows["1503016"]["rated_games"] == 7
    assert rows["1503017"]["rated_games"] == 5
    assert rows["1503015"]["rated_games"] == 30


def test_a_list_before_2014_07_reads_k_by_the_rules_of_its_era(tmp_path: Path) -> None:
    """Before 2014-07 a new player's K was 30 and an established one's 15 (RULES §3.3): K 30 of
    an adult means fewer than 30 games then (today's rules would read it as 30 completed)."""
    lines = [
        txt_header("2012-12"),
        line(STARTS, id="1", name="New, Adult", rating="1700", gms="7", k="30", bday="1980"),
        line(STARTS, id="2", name="Old, Hand", rating="1800", gms="3", k="15", bday="1970"),
        "",
    ]
    path = write(tmp_path, "fide-standard@2012-12.txt", "\n".join(lines))
    rows = by_id(read_starting_list(path, "federation/lists/fide-standard@2012-12.txt").rows)
    assert (rows["1"]["rated_games"], rows["2"]["rated_games"]) == (7, 30)


def test_combined_list_reads_the_columns_of_the_list_the_name_says(tmp_path: Path) -> None:
    text = "\n".join(
        [
            COMBINED_HEADER,
            line(
                COMBINED_STARTS,
                id="700070",
                name="Polgar, Judit",
                fed="HUN",
                sex="F",
                tit="GM",
                srtng="2675",
                sgm="0",
                sk="10",
                rrtng="2600",
                rgm="3",
                rk="10",
                brtng="2650",
                bgm="0",
                bk="10",
                bday="1976",
                flag="wi",
            ),
            line(
                COMBINED_STARTS,
                id="4100018",
                name="Rapid, Less",
                fed="TUR",
                sex="M",
                srtng="1800",
                sgm="2",
                sk="20",
                bday="1990",
            ),
        ]
    )
    rapid = read_starting_list(write(tmp_path, "fide-rapid@2025-12.txt", text), "r.txt")
    assert rapid.rows.select("player_id", "rating", "peak_rating").rows() == [
        ("700070", 2600, 2600)
    ]
    assert rapid.notes == ("r.txt: 1 player without a rapid rating, not on the list",)
    standard = read_starting_list(write(tmp_path, "fide-standard@2025-12.txt", text), "s.txt")
    assert by_id(standard.rows)["4100018"]["rating"] == 1800


def test_malformed_lines_are_quarantined_and_the_others_land(tmp_path: Path) -> None:
    good = dict(name="Good, One", fed="TUR", sex="M", gms="0", k="20", bday="1990")
    lines = [
        FIDE_HEADER_JAN23,
        line(STARTS, id="100", rating="1800", **good),
        line(STARTS, id="1O1", rating="1800", **good),  # letter O in the id
        line(STARTS, id="102", rating="18x0", **good),
        line(STARTS, id="103", rating="1800", **{**good, "k": "2O"}),
        line(STARTS, id="104", rating="1800", **{**good, "bday": "19.5"}),
        line(STARTS, id="100", rating="1900", **good),
        line(STARTS, id="105", rating="2000", **good),
    ]
    path = write(tmp_path, "fide-standard@2022-12.txt", "\n".join(lines))
    result = read_starting_list(path, "lists/fide-standard@2022-12.txt")
    assert sorted(result.rows["player_id"]) == ["100", "105"]
    assert by_id(result.rows)["100"]["rating"] == 1800
    q = result.quarantine.select("source_file", "line", "value", "reason").rows()
    assert q == [
        (
            "lists/fide-standard@2022-12.txt",
            3,
            "1O1",
            "ID Number '1O1' is not a FIDE number (digits only)",
        ),
        (
            "lists/fide-standard@2022-12.txt",
            4,
            "18x0",
            "JAN23 '18x0' is not a whole number from 0 to 3500",
        ),
        ("lists/fide-standard@2022-12.txt", 5, "2O", "K '2O' is not a whole number from 0 to 100"),
        ("lists/fide-standard@2022-12.txt", 6, "19.5", "B-day '19.5' is not a year (YYYY)"),
        (
            "lists/fide-standard@2022-12.txt",
            7,
            "100",
            "player '100' appears again (first on line 2)",
        ),
    ]


def test_a_month_that_contradicts_the_file_name_stops_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "fide-standard@2023-01.txt", FIDE_HEADER_JAN23 + "\n")
    with pytest.raises(UnreadableFileError, match=r"name the file fide-standard@2022-12\.txt"):
        read_starting_list(path, "fide-standard@2023-01.txt")


@pytest.mark.parametrize(
    ("name", "text", "fragment"),
    [
        ("fide-standard@2025-12.txt", "player_id,rating\n1,1500\n", "header beginning 'ID Number'"),
        ("fide-standard@2025-12.xml", "<players><p/></players>", "no <playerslist> root"),
        ("ukd-standard@2025-12.txt", FIDE_HEADER_JAN23, "must be a CSV"),
    ],
)
def test_files_that_are_not_fide_lists_are_one_sentence(
    tmp_path: Path, name: str, text: str, fragment: str
) -> None:
    with pytest.raises(UnreadableFileError, match=fragment):
        read_starting_list(write(tmp_path, name, text), name)


PER_LIST_XML = """<?xml version="1.0" encoding="UTF-8"?>
<playerslist>
<player>
<fideid>1503014</fideid>
<name>Carlsen, Magnus</name>
<country>NOR</country>
<sex>M</sex>
<title>GM</title>
<w_title></w_title>
<o_title></o_title>
<foa_title></foa_title>
<rating>2830</rating>
<games>9</games>
<k>10</k>
<birthday>1990</birthday>
<flag></flag>
</player>
<player><fideid>4100018</fideid><name>O&apos;Neil &amp; Co</name><rating>17o0</rating><k>20</k></player>
<player><fideid>4100019</fideid><rating>1650</rating><games>3</games><k>40</k><birthday>1970</birthday></player>
<player><fideid>4100020</fideid><rating>1700</rating>
</playerslist>
"""


def test_xml_list_with_malformed_players(tmp_path: Path) -> None:
    path = write(tmp_path, "fide-standard@2025-12.xml", PER_LIST_XML)
    result = read_starting_list(path, "x.xml")
    assert result.rows.select("player_id", "rating", "rated_games", "peak_rating").rows() == [
        ("1503014", 2830, 30, 2830),
        ("4100019", 1650, 5, 1650),
    ]
    quarantine = result.quarantine.select("line", "record", "reason").rows()
    assert quarantine[0] == (18, "4100018", "rating '17o0' is not a whole number from 0 to 3500")
    assert quarantine[1][:2] == (20, "4100020")
    assert quarantine[1][2].startswith(
        "the <player> element starting here is not well-formed XML (Opening and ending tag "
        "mismatch: player line 20 and playerslist"
    )
    assert len(quarantine) == 2


def test_combined_xml_reads_the_rapid_elements(tmp_path: Path) -> None:
    text = (
        "<playerslist><player><fideid>700070</fideid><rating>2675</rating><k>10</k>"
        "<rapid_rating>2600</rapid_rating><rapid_games>2</rapid_games><rapid_k>20</rapid_k>"
        "<blitz_rating>0</blitz_rating><birthday>1976</birthday></player></playerslist>"
    )
    rapid = read_starting_list(write(tmp_path, "fide-rapid@2025-12.xml", text), "r.xml")
    assert rapid.rows.select("rating", "rated_games", "peak_rating").rows() == [(2600, 30, 2600)]
    blitz = read_starting_list(write(tmp_path, "fide-blitz@2025-12.xml", text), "b.xml")
    assert blitz.rows.height == 0 and "without a blitz rating" in blitz.notes[0]


def test_the_inbox_reads_txt_and_xml_starting_lists(tmp_path: Path) -> None:
    lists = tmp_path / "federation" / "lists"
    lists.mkdir(parents=True)
    write(
        lists,
        "fide-standard@2022-12.txt",
        FIDE_HEADER_JAN23 + "\n" + line(STARTS, id="5", name="A", rating="1500", k="20"),
    )
    write(lists, "fide-rapid@2022-12.xml", PER_LIST_XML)
    batch = ingest_starting_lists(tmp_path)
    assert sorted(batch.rows["list"].unique()) == ["fide-rapid", "fide-standard"]
    assert batch.quarantine.height == 2
    assert set(batch.files["source_file"]) == {
        "federation/lists/fide-standard@2022-12.txt",
        "federation/lists/fide-rapid@2022-12.xml",
    }


def test_a_file_that_is_not_utf8_is_read_as_windows_1252(tmp_path: Path) -> None:
    text = (
        FIDE_HEADER_JAN23 + "\n" + line(STARTS, id="7", name="Müller, Jörg", rating="2000", k="20")
    )
    path = tmp_path / "fide-standard@2022-12.txt"
    path.write_bytes(text.encode("cp1252"))
    result = read_starting_list(path, "m.txt")
    assert result.rows.select("player_id", "rating").rows() == [("7", 2000)]
    assert result.notes == ("m.txt: not UTF-8; read as Windows-1252",)
