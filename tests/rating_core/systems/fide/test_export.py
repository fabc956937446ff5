"""FIDE's download files written from list frames, checked against FIDE's own lines byte for byte
(`../shared/external/fide-lists/`: the header and four players of FIDE's August 2026 blitz
list) and read back as FIDE's users read them: by byte position (TXT) and by element name (XML).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rating_core.ingest.registry import read_starting_list
from rating_core.schemas import GAMES_SCHEMA
from rating_core.systems.federation import federation_state_tables, fide_lists_periods
from rating_core.systems.fide.export import Format, combined_file, per_list_file
from rating_core.systems.fide.formats import COMBINED_COLUMNS, txt_header
from rating_core.systems.fide.rules import rules_for_period

REAL_LIST = "fide-lists/fide-blitz@2026-07.txt"
"""FIDE's blitz list dated 1 August 2026 (the list after period 2026-07), a few real lines."""

# FIDE's layouts as public parsers of FIDE's downloads cut them (0-based start, end), written
# here independently of the code under test.
PER_LIST_CUTS = {
    "id": (0, 15),
    "name": (15, 76),
    "fed": (76, 80),
    "sex": (80, 84),
    "tit": (84, 89),
    "wtit": (89, 94),
    "otit": (94, 109),
    "foa": (109, 113),
    "rating": (113, 119),
    "gms": (119, 123),
    "k": (123, 126),
    "bday": (126, 132),
    "flag": (132, 136),
}
COMBINED_CUTS = {
    **{f: PER_LIST_CUTS[f] for f in ("id", "name", "fed", "sex", "tit", "wtit", "otit", "foa")},
    "srtng": (113, 119),
    "sgm": (119, 123),
    "sk": (123, 126),
    "rrtng": (126, 132),
    "rgm": (132, 136),
    "rk": (136, 139),
    "brtng": (139, 145),
    "bgm": (145, 149),
    "bk": (149, 152),
    "bday": (152, 158),
    "flag": (158, 162),
}
XML_ORDER = [
    "fideid", "name", "country", "sex", "title", "w_title", "o_title", "foa_title",
    "rating", "games", "k", "birthday", "flag",
]  # fmt: skip
COMBINED_XML_ORDER = [
    *XML_ORDER[:11],
    "rapid_rating", "rapid_games", "rapid_k", "blitz_rating", "blitz_games", "blitz_k",
    "birthday", "flag",
]  # fmt: skip


def cut_by_bytes(data: bytes, cuts: dict[str, tuple[int, int]]) -> tuple[bytes, list[dict]]:
    """(header, players) of a FIDE TXT read as FIDE's users do: CRLF lines, each field the bytes
    of its columns, stripped."""
    header, *lines = data.split(b"\r\n")
    assert lines[-1] == b""  # CRLF after the last line too
    players = [
        {f: line[a:b].decode("ascii").strip() for f, (a, b) in cuts.items()} for line in lines[:-1]
    ]
    return header, players


def read_by_name(data: bytes) -> list[dict[str, str]]:
    """The `player` elements of a FIDE XML by element name, as xml.etree reads them."""
    root = ET.fromstring(data)
    assert root.tag == "playerslist"
    return [{child.tag: child.text or "" for child in player} for player in root]


@pytest.fixture(scope="module")
def real_bytes() -> bytes:
    from tests.conftest import require_external

    return (require_external() / REAL_LIST).read_bytes()


@pytest.fixture(scope="module")
def real_players(real_bytes: bytes) -> list[dict]:
    return cut_by_bytes(real_bytes, PER_LIST_CUTS)[1]


def person_frame(players: list[dict]) -> pl.DataFrame:
    """The person columns of a list (DESIGN §5) with the values of FIDE's lines; empty is null."""

    def col(field: str) -> list[str | None]:
        return [p[field] or None for p in players]

    return pl.DataFrame(
        {
            "player_id": col("id"),
            "name": col("name"),
            "federation": col("fed"),
            "sex": col("sex"),
            "title": col("tit"),
            "w_title": col("wtit"),
            "o_title": col("otit"),
            "foa_title": col("foa"),
            "birth_year": pl.Series([int(p["bday"]) for p in players], dtype=pl.Int32),
            "flag": col("flag"),
        }
    )


def list_frame(players: list[dict]) -> pl.DataFrame:
    """A list frame of FIDE's values: the person columns, rating (a Float64 as in list.parquet),
    games and the K FIDE shows."""
    return person_frame(players).with_columns(
        pl.Series("rating", [float(p["rating"]) for p in players]),
        pl.Series("games", [int(p["gms"]) for p in players], dtype=pl.Int32),
        pl.Series("k", [int(p["k"]) for p in players], dtype=pl.Int32),
    )


def fide_order(data: bytes) -> bytes:
    """FIDE's lines with the players in name order (the order of FIDE's whole files; the sample
    puts its two inactive players first)."""
    header, *lines = data.split(b"\r\n")
    players = sorted(lines[:-1], key=lambda line: line[15:76].strip().lower())
    return b"\r\n".join([header, *players, b""])


def test_the_header_is_fides_byte_for_byte(real_bytes: bytes) -> None:
    header = real_bytes.split(b"\r\n")[0]
    assert txt_header("2026-07").encode("ascii") == header
    combined = txt_header("2026-07", COMBINED_COLUMNS)
    assert len(combined) == 162 and combined.startswith(header[:113].decode())
    assert combined[113:] == "SRtng SGm SK RRtng RGm Rk BRtng BGm BK B-day Flag"


def test_a_list_of_fides_values_is_fides_file_byte_for_byte(
    real_bytes: bytes, real_players: list[dict]
) -> None:
    exported = per_list_file(list_frame(real_players), "2026-07", "txt")
    assert exported.data == fide_order(real_bytes)
    assert (exported.players, exported.left_out) == (4, 0)


def test_the_k_by_the_rules_is_fides_k(real_bytes: bytes, real_players: list[dict]) -> None:
    """The list read as a starting list (career count and peak inferred from K), then the list of
    the next period for players who did not play (the FIDE period run with no games) with the
    person columns of FIDE's lines: each player's line is FIDE's, with the K step 4 gives."""
    from tests.conftest import require_external

    read = read_starting_list(require_external() / REAL_LIST, REAL_LIST)
    assert read.quarantine.is_empty()
    persons = person_frame(real_players)
    states: dict[str, pl.DataFrame | None] = dict.fromkeys(federation_state_tables("fide"))
    people = persons.select("player_id", "name", "birth_year")  # the registry's birth years
    outputs = dict(
        fide_lists_periods(
            pl.DataFrame(schema=GAMES_SCHEMA), read.rows, states, people, ["2026-08"]
        )
    )
    listed = outputs["2026-08"].list_rows.filter(pl.col("list") == "fide-blitz")
    assert listed["games"].to_list() == [0] * 4
    frame = listed.drop("flag").join(persons, on="player_id")  # fide-data's columns, by hand
    exported = per_list_file(frame, "2026-08", "txt").data
    header, *lines = exported.split(b"\r\n")
    assert header.endswith(b"FOA SEP26 Gms K  B-day Flag")
    assert b"\r\n".join(lines) == fide_order(real_bytes).split(b"\r\n", 1)[1]


def test_next_periods_export_of_a_player_who_did_not_play_is_fides_line(real_bytes: bytes) -> None:
    from tests.conftest import require_external

    read = read_starting_list(require_external() / REAL_LIST, REAL_LIST)
    states: dict[str, pl.DataFrame | None] = dict.fromkeys(federation_state_tables("fide"))
    outputs = dict(
        fide_lists_periods(pl.DataFrame(schema=GAMES_SCHEMA), read.rows, states, None, ["2026-08"])
    )
    listed = outputs["2026-08"].list_rows.filter(pl.col("list") == "fide-blitz")
    exported = per_list_file(listed, "2026-08", "txt").data
    assert exported.split(b"\r\n", 1)[1] == fide_order(real_bytes).split(b"\r\n", 1)[1]


def test_every_line_is_ascii_crlf_and_fixed_width() -> None:
    frame = pl.DataFrame(
        {
            "player_id": ["34500001", "13400003", "777", "12", "x-1"],
            "name": ["Yılmaz, Ayşe", "Иванчук, Василий", "Smith & Jones <x>", "Tab\there", "B"],
            "rating": [2190.0, 2705.0, 1500.0, 1000.0, 1200.0],
            "games": [6, 3, 0, None, 1],
        }
    )
    out = per_list_file(frame, "2026-05", "txt")
    assert (out.players, out.left_out) == (4, 1)  # x-1 is not a FIDE number
    text = out.data.decode("ascii")  # raises on any byte above 127
    assert text.count("\r\n") == 5 and "\n" not in text.replace("\r\n", "")
    assert {len(line) for line in text.split("\r\n")[:-1]} == {136}
    header, players = cut_by_bytes(out.data, PER_LIST_CUTS)
    by_id = {p["id"]: p for p in players}
    assert by_id["34500001"]["name"] == "Yilmaz, Ayse"
    assert by_id["13400003"]["name"] == "Ivanchuk, Vasiliy"
    assert by_id["12"]["name"] == "Tab here" and by_id["12"]["gms"] == "0"
    # nothing known but the rating: FIDE's unknowns, birth year 0, K 0 (no career, no k)
    assert by_id["777"] | {"name": ""} == {
        "id": "777", "name": "", "fed": "", "sex": "", "tit": "", "wtit": "", "otit": "",
        "foa": "", "rating": "1500", "gms": "0", "k": "0", "bday": "0", "flag": "",
    }  # fmt: skip
    assert [p["name"] for p in players] == ["Ivanchuk, Vasiliy", "Smith & Jones <x>",
                                            "Tab here", "Yilmaz, Ayse"]  # fmt: skip


def test_the_k_is_the_next_periods_and_the_flag_fides() -> None:
    """K from the career (step 4 of the next period), w for a woman, i inactive; a women's title
    repeats in WTit; the registry fills what the list leaves empty."""
    frame = pl.DataFrame(
        {
            "player_id": ["1", "2", "3"],
            "name": ["New, Adult", "Old, Master", None],
            "sex": ["F", "M", None],
            "title": ["WIM", "GM", None],
            "birth_year": pl.Series([1990, None, None], dtype=pl.Int32),
            "rating": [2190.0, 2350.0, 1600.0],
            "games": [9, 0, 2],
            "k": [40, 10, 40],
            "rated_games": [31, 400, 12],
            "peak_rating": [2200, 2450, 1600],
            "flag": [None, "i", "w"],
        }
    )
    registry = pl.DataFrame(
        {
            "player_id": ["3", "1"],
            "name": ["Reg, Istry", "Not used"],
            "federation": ["tur", "ENG"],
            "sex": ["w", "m"],
            "title": [None, "GM"],
            "birth_year": [2012, 1900],
        }
    )
    _, players = cut_by_bytes(per_list_file(frame, "2026-05", "txt", registry).data, PER_LIST_CUTS)
    by_id = {p["id"]: p for p in players}
    one, two, three = by_id["1"], by_id["2"], by_id["3"]
    assert (one["k"], one["tit"], one["wtit"], one["flag"], one["sex"]) == (
        "20",
        "WIM",
        "WIM",
        "w",
        "F",
    )
    assert (one["fed"], one["bday"], one["name"]) == ("ENG", "1990", "New, Adult")
    assert (two["k"], two["flag"], two["bday"], two["fed"]) == ("10", "i", "0", "")
    assert (three["name"], three["fed"], three["sex"], three["bday"]) == (
        "Reg, Istry",
        "TUR",
        "F",
        "2012",
    )
    assert (three["k"], three["flag"]) == ("40", "w")  # a junior in 2026


def test_long_values_never_run_into_the_next_column() -> None:
    frame = pl.DataFrame(
        {
            "player_id": ["1", "2"],
            "name": ["N" * 80, "Short"],
            "o_title": ["SI,FI,LSI,SLI,NA", "IA,FA"],
            "rating": [2000.0, 2000.0],
        }
    )
    _, players = cut_by_bytes(per_list_file(frame, "2026-05", "txt").data, PER_LIST_CUTS)
    assert players[0]["name"] == "N" * 60 and players[0]["otit"] == "SI,FI,LSI,SLI"
    assert players[1]["otit"] == "IA,FA" and players[0]["fed"] == ""


def test_xml_has_no_declaration_and_fides_element_order(real_players: list[dict]) -> None:
    data = per_list_file(list_frame(real_players), "2026-07", "xml").data
    assert data.startswith(b"<playerslist>\r\n<player>\r\n<fideid>")
    assert data.endswith(b"</player>\r\n</playerslist>\r\n")
    data.decode("ascii")
    root = ET.fromstring(data)
    assert all([child.tag for child in player] == XML_ORDER for player in root)
    read = {p["fideid"]: p for p in read_by_name(data)}
    assert read["700070"] == {
        "fideid": "700070", "name": "Polgar, Judit", "country": "HUN", "sex": "F",
        "title": "GM", "w_title": "", "o_title": "", "foa_title": "", "rating": "2736",
        "games": "0", "k": "10", "birthday": "1976", "flag": "wi",
    }  # fmt: skip
    assert b"<w_title>WCM</w_title>" in data and b"<w_title></w_title>" in data


def test_xml_escapes_names_and_leaves_unknowns_empty() -> None:
    frame = pl.DataFrame(
        {"player_id": ["7"], "name": ["Smith & Jones <Ø>"], "rating": [1500.0], "games": [0]}
    )
    data = per_list_file(frame, "2026-05", "xml").data
    assert b"<name>Smith &amp; Jones &lt;O&gt;</name>" in data
    player = read_by_name(data)[0]
    assert player["name"] == "Smith & Jones <O>"
    assert (player["birthday"], player["k"], player["country"]) == ("", "", "")


STANDARD = pl.DataFrame(
    {
        "player_id": ["1503014", "2016192"],
        "name": ["Carlsen, Magnus", "Nakamura, Hikaru"],
        "federation": ["NOR", "USA"],
        "sex": ["M", "M"],
        "title": ["GM", "GM"],
        "birth_year": pl.Series([1990, 1987], dtype=pl.Int32),
        "rating": [2823.0, 2792.0],
        "games": [0, 0],
        "k": [10, 10],
    }
)
RAPID = STANDARD.head(1).with_columns(rating=pl.lit(2801.0), games=pl.lit(12))
BLITZ = pl.DataFrame(
    {
        "player_id": ["1503014", "2016192", "48701955"],
        "name": ["Carlsen, Magnus", "Nakamura, Hikaru", "Aadya Gowda"],
        "federation": ["NOR", "USA", "IND"],
        "sex": ["M", "M", "F"],
        "title": ["GM", "GM", "WCM"],
        "birth_year": pl.Series([1990, 1987, 2013], dtype=pl.Int32),
        "rating": [2860.0, 2800.0, 1807.0],
        "games": [0, 0, 0],
        "k": [10, 10, 40],
        "flag": [None, None, "wi"],
    }
)
LISTS = {"standard": STANDARD, "rapid": RAPID, "blitz": BLITZ}


def test_the_combined_file_carries_each_lists_rating_games_and_k() -> None:
    out = combined_file(LISTS, "2026-09", "txt")
    text = out.data.decode("ascii")
    assert {len(line) for line in text.split("\r\n")[:-1]} == {162}
    header, players = cut_by_bytes(out.data, COMBINED_CUTS)
    assert header.startswith(b"ID Number      Name") and header.endswith(b"BK B-day Flag")
    carlsen, aadya, hikaru = (players[i] for i in (1, 0, 2))  # name order
    assert [carlsen[f] for f in ("srtng", "sgm", "sk", "rrtng", "rgm", "rk", "brtng", "bgm",
                                 "bk", "bday", "flag")] == [
        "2823", "0", "10", "2801", "12", "10", "2860", "0", "10", "1990", ""]  # fmt: skip
    assert (hikaru["rrtng"], hikaru["rgm"], hikaru["rk"], hikaru["brtng"]) == (
        "0",
        "0",
        "0",
        "2800",
    )
    assert (aadya["srtng"], aadya["sk"], aadya["brtng"], aadya["bk"]) == ("0", "0", "1807", "40")
    assert (aadya["fed"], aadya["tit"], aadya["wtit"], aadya["flag"]) == ("IND", "WCM", "WCM", "wi")
    assert out.players == 3
    # the line FIDE's combined file has for Carlsen in a month with 12 rapid games
    line = text.split("\r\n")[2]
    assert line == (
        "1503014        Carlsen, Magnus" + " " * 46 + "NOR M   GM" + " " * 27
        + "2823  0   10 2801  12  10 2860  0   10 1990      "
    )  # fmt: skip


def test_the_combined_xml_by_element_name() -> None:
    data = combined_file(LISTS, "2026-09", "xml").data
    assert data.startswith(b"<playerslist>\r\n")
    root = ET.fromstring(data)
    assert all([child.tag for child in player] == COMBINED_XML_ORDER for player in root)
    read = {p["fideid"]: p for p in read_by_name(data)}
    assert (read["2016192"]["rapid_rating"], read["2016192"]["rapid_k"]) == ("", "")
    assert (read["1503014"]["rapid_rating"], read["1503014"]["rapid_games"]) == ("2801", "12")
    assert read["48701955"]["rating"] == "" and read["48701955"]["blitz_k"] == "40"


def test_a_period_without_some_lists_still_writes_the_combined_file() -> None:
    out = combined_file({"blitz": BLITZ, "rapid": None}, "2026-09", "txt")
    _, players = cut_by_bytes(out.data, COMBINED_CUTS)
    assert [p["srtng"] for p in players] == ["0", "0", "0"] and out.players == 3
    empty = combined_file({}, "2026-09", "txt")
    assert empty.data.count(b"\r\n") == 1 and empty.players == 0


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 10**14 - 1),
            st.text(min_size=0, max_size=90),
            st.integers(0, 3400),
            st.integers(0, 999),
            st.sampled_from([None, "i", "w", "wi"]),
        ),
        min_size=1,
        max_size=8,
        unique_by=lambda t: t[0],
    )
)
def test_any_list_reads_back_by_byte_position(rows: list[tuple]) -> None:
    """Whatever the names, the TXT is ASCII, 136 characters a line, and a byte cutter reads every
    player's id, rating and games back."""
    frame = pl.DataFrame(
        {
            "player_id": [str(r[0]) for r in rows],
            "name": [r[1] for r in rows],
            "rating": [float(r[2]) for r in rows],
            "games": [r[3] for r in rows],
            "flag": [r[4] for r in rows],
        },
        schema_overrides={"flag": pl.String},
    )
    data = per_list_file(frame, "2026-05", "txt").data
    assert all(len(line) == 136 for line in data.split(b"\r\n")[:-1])
    _, players = cut_by_bytes(data, PER_LIST_CUTS)
    got = sorted((int(p["id"]), int(p["rating"]), int(p["gms"])) for p in players)
    assert got == sorted((r[0], r[2], r[3]) for r in rows)
    xml = read_by_name(per_list_file(frame, "2026-05", "xml").data)
    assert sorted(int(p["fideid"]) for p in xml) == sorted(r[0] for r in rows)


def test_the_k_is_that_of_the_next_periods_era() -> None:
    """A list of 2012-12 shows January 2013's K, of the era before 2014-07 (RULES §3.3: another K
    under 30 games and for an established player than today's 40 and 20)."""
    frame = pl.DataFrame(
        {
            "player_id": ["1", "2"],
            "name": ["New, Adult", "Old, Hand"],
            "birth_year": [1980, 1970],
            "rating": [1700.0, 1800.0],
            "rated_games": [12, 106],
            "peak_rating": [1700, 1850],
        }
    )

    def ks(period: str) -> list[str]:
        _, players = cut_by_bytes(per_list_file(frame, period, "txt").data, PER_LIST_CUTS)
        return [p["k"] for p in players]

    old = rules_for_period("2013-01")
    assert (old.k_new, old.k_default) != (40, 20)
    assert ks("2012-12") == [str(old.k_new), str(old.k_default)]
    assert ks("2026-05") == ["40", "20"]
    # RULES §3.3: the K of a rapid list of 2021-12 is January 2022's rapid K, 20 for everyone;
    # the combined file takes each list's own rules
    rapid = rules_for_period("2022-01", "rapid")
    assert rapid.k_values == (20,)
    _, fast = cut_by_bytes(per_list_file(frame, "2021-12", "txt", None, rapid).data, PER_LIST_CUTS)
    assert [p["k"] for p in fast] == ["20", "20"]
    lists = {"standard": frame, "rapid": frame}
    combined = combined_file(lists, "2021-12", "xml").data.decode("ascii")
    assert "<k>40</k>" in combined and "<rapid_k>20</rapid_k>" in combined
    assert "<rapid_k>40</rapid_k>" not in combined


@pytest.mark.parametrize("fmt", ["txt", "xml"])
def test_an_export_reads_back_as_a_starting_list(tmp_path: Path, fmt: Format) -> None:
    """Our reader of FIDE's files takes our exports (ratings; K 40 of an adult is the fewest
    games, 5; K 20 is 30 completed)."""
    frame = pl.DataFrame(
        {
            "player_id": ["34500001", "777"],
            "name": ["Yılmaz, Ayşe", "Smith & Jones <x>"],
            "birth_year": [1994, None],
            "rating": [2190.0, 1500.0],
            "games": [6, 0],
            "rated_games": [31, 12],
            "peak_rating": [2200, 1500],
        }
    )
    path = tmp_path / f"fide-standard@2026-05.{fmt}"
    path.write_bytes(per_list_file(frame, "2026-05", fmt).data)
    read = read_starting_list(path, path.name)
    assert read.quarantine.is_empty()
    assert sorted(read.rows.select("player_id", "rating", "rated_games").rows()) == [
        ("34500001", 2190, 30),
        ("777", 1500, 5),
    ]
