"""Name search (accents and case ignored) and FIDE-style top lists."""

from __future__ import annotations

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from rating_core.lake.players import find_players, fold_names, fold_text, top_list


def test_fold_ignores_accents_case_and_dotless_letters() -> None:
    names = ["Doğan, Şule", "KARATAŞ, İlkay", "Işık", "Łukasz Øster", "Məmmədov"]
    assert fold_names(pl.Series(names)).to_list() == [
        "dogan, sule",
        "karatas, ilkay",
        "isik",
        "lukasz oster",
        "məmmədov",  # the schwa is a letter of its own (no Latin letter in its Unicode name)
    ]


@given(st.text(st.characters(max_codepoint=0x24F), max_size=12))  # Latin letters
def test_polars_folds_as_python_does(text: str) -> None:
    assert fold_names(pl.Series([text])).to_list() == [fold_text(text)]


def test_find_by_part_of_a_name_or_an_id() -> None:
    names = pl.DataFrame(
        {"player_id": ["1", "2", "3"], "name": ["Doğan, Şule", "Sule Demir", "Kaya, Ali"]}
    )
    lists = pl.DataFrame(
        {
            "list": ["fide-standard", "fide-rapid", "fide-standard"],
            "period": ["2026-06"] * 3,
            "player_id": ["1", "1", "3"],
            "rating": [1706.0, 1681.0, 1500.0],
        }
    )
    found = find_players(names, "ŞULE", lists)
    assert found.select("player_id", "list").rows() == [
        ("1", "fide-rapid"),
        ("1", "fide-standard"),
        ("2", None),
    ]
    assert find_players(names, "3", lists)["name"].to_list() == ["Kaya, Ali"]
    assert find_players(names, "nobody", lists).is_empty()


ROWS = pl.DataFrame(
    {
        "player_id": ["a", "b", "c", "d", "e", "f"],
        "rating": [2500.0, 2400.0, 2400.0, 2300.0, 2600.0, 2100.0],
        "federation": ["TUR", "TUR", "AZE", "TUR", "TUR", "tur"],
        "sex": ["M", "F", "F", "F", "M", "F"],
        "birth_year": [1990, 2007, 2006, 2005, 2008, 2010],
        "flag": [None, "w", "w", "w", "i", "wi"],
    }
)


def test_top_list_of_a_federation_skips_the_inactive() -> None:
    top = top_list(ROWS, "2026-06", federation="tur")
    assert top.select("position", "player_id").rows() == [(1, "a"), (2, "b"), (3, "d")]


def test_women_and_juniors() -> None:
    women = top_list(ROWS, "2026-06", women=True)
    assert women.select("position", "player_id").rows() == [(1, "b"), (1, "c"), (3, "d")]
    # the list of period 2026-06 is FIDE's JUL26: juniors born in 2006 or later
    juniors = top_list(ROWS, "2026-06", juniors=True, women=True)
    assert juniors["player_id"].to_list() == ["b", "c"]
    # the list of period 2026-12 is FIDE's JAN27: born in 2007 or later
    assert top_list(ROWS, "2026-12", juniors=True)["player_id"].to_list() == ["b"]
