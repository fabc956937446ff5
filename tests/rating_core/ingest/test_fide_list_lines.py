"""`read_fide_list_lines`: FIDE's own lines (rating, games, K) for `ratings reconcile`, the same
players `read_fide_list` keeps, from TXT and XML."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from rating_core.ingest.fide_lists import read_fide_list, read_fide_list_lines

SAMPLE = (
    Path(__file__).resolve().parents[3] / "data_samples/federation/lists/fide-blitz@2025-12.txt"
)


def test_txt_lines_carry_games_and_k() -> None:
    lines = read_fide_list_lines(SAMPLE, "fide-blitz", "2025-12", SAMPLE.name)
    kept = read_fide_list(SAMPLE, "fide-blitz", "2025-12", SAMPLE.name).rows
    assert sorted(lines["player_id"]) == sorted(kept["player_id"])
    joined = lines.join(kept.select("player_id", "rating"), on="player_id", suffix="_kept")
    assert (joined["rating"] == joined["rating_kept"]).all()
    dogan = lines.filter(pl.col("player_id") == "34500005").row(0, named=True)
    assert (dogan["rating"], dogan["games"], dogan["k"]) == (1688, 0, 40)


def test_xml_lines_and_a_malformed_player_left_out(tmp_path: Path) -> None:
    path = tmp_path / "fide-standard@2026-06.xml"
    path.write_text(
        "<playerslist>\n"
        "<player><fideid>1</fideid><rating>2100</rating><games>7</games><k>20</k>"
        "<birthday>1990</birthday></player>\n"
        "<player><fideid>2</fideid><rating>21x0</rating><games>1</games><k>20</k>"
        "<birthday>1990</birthday></player>\n"
        "<player><fideid>3</fideid><rating>0</rating><games>0</games><k>40</k>"
        "<birthday>2001</birthday></player>\n"
        "</playerslist>\n",
        encoding="ascii",
    )
    lines = read_fide_list_lines(path, "fide-standard", "2026-06", path.name)
    assert lines.rows() == [
        ("1", 2100, 7, 20)
    ]  # 2: malformed (quarantined by read_fide_list); 3: unrated
