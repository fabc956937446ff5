"""Players by name, and top lists (issue 32 item 7): `ratings find` and `ratings show --top`.

Names are compared folded: Unicode NFKD with the combining marks dropped (Şule → Sule, İlkay →
Ilkay), lower-cased, then the letters NFKD keeps whole but whose Unicode name says which Latin
letter they carry (ı DOTLESS I, ø O WITH STROKE, ł L WITH STROKE) replaced by that letter: the
Unicode database's own names, no hand table. The folding runs once per distinct character, not per
name, and the names themselves are folded by Polars.

Top lists follow FIDE's: active players only (no `i` or `wi` flag), by rating, highest first;
`women` keeps sex F; `juniors` keeps players born in or after the list's year − 20 (FIDE's
juniors: under 20 on 1 January of the list's year; the list of period P is FIDE's list dated the
first day of P + 1, so its year is that date's).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import polars as pl

from rating_core import tables
from rating_core.lake import publishing as publish
from rating_core.lake.storage import read_table
from rating_core.periods import next_period

_LATIN_LETTER = re.compile(r"^LATIN (SMALL|CAPITAL) LETTER (DOTLESS )?([A-Z])( WITH .*)?$")
"""A Unicode name that says which Latin letter a character carries."""

JUNIOR_AGE = 20
"""FIDE's junior lists: players under 20 on 1 January of the list's year."""
INACTIVE_FLAGS = ("i", "wi")
"""FIDE's flags of an inactive player (not on the top lists)."""


def _folded_char(char: str) -> str:
    """One character folded: its NFKD form without combining marks, lower-cased, else the Latin
    letter its Unicode name gives."""
    decomposed = unicodedata.normalize("NFKD", char)
    plain = "".join(c for c in decomposed if not unicodedata.category(c).startswith("M")).lower()
    if plain.isascii():
        return plain
    out = []
    for c in plain:
        match = _LATIN_LETTER.match(unicodedata.name(c, ""))
        out.append(match.group(3).lower() if match else c)
    return "".join(out)


def fold_text(text: str) -> str:
    """`text` folded for comparison (accents and case ignored)."""
    return "".join(_folded_char(c) for c in text)


def fold_names(names: pl.Series) -> pl.Series:
    """Every name folded as `fold_text` folds one, by Polars: NFKD, marks dropped, lower case,
    then the remaining non-ASCII characters (each folded once) replaced."""
    base = names.str.normalize("NFKD").str.replace_all(r"\p{M}", "").str.to_lowercase()
    odd = base.str.extract_all(r"[^\x00-\x7f]").explode().drop_nulls().unique().sort().to_list()
    replaced = {c: _folded_char(c) for c in odd if _folded_char(c) != c}
    if not replaced:
        return base
    return base.str.replace_many(list(replaced), list(replaced.values()))


def find_players(names: pl.DataFrame, text: str, lists: pl.DataFrame) -> pl.DataFrame:
    """The players whose name or id holds `text` (folded), each with the lists they are on.

    `names`: player_id, name. `lists`: the current rows of each list (list, period, player_id,
    rating). One row per player and list (list null when on none), by name then list.
    """
    wanted = fold_text(text.strip())
    folded = fold_names(names.get_column("name").fill_null(""))
    hits = names.with_columns(folded.alias("_folded")).filter(
        pl.col("_folded").str.contains(wanted, literal=True) | (pl.col("player_id") == text.strip())
    )
    on = lists.select("player_id", "list", "period", pl.col("rating").cast(pl.Float64))
    return (
        hits.select("player_id", "name")
        .join(on, on="player_id", how="left")
        .sort("name", "player_id", "list", nulls_last=True)
    )


def current_list_rows(lake: Path | str) -> pl.DataFrame:
    """Every list's rows in its latest period (newest version): list, period, player_id, rating."""
    current = publish.current_versions(lake)
    frames = []
    if current.height:
        latest = current.filter(pl.col("period") == pl.col("period").max().over("list"))
        for row in latest.iter_rows(named=True):  # one small file per list
            frame = publish.read_list(lake, row["list"], row["period"], row["version"])
            frames.append(
                frame.select(
                    pl.lit(row["list"]).alias("list"),
                    pl.lit(row["period"]).alias("period"),
                    "player_id",
                    pl.col("rating").cast(pl.Float64),
                )
            )
    schema = {"list": pl.String, "period": pl.String, "player_id": pl.String, "rating": pl.Float64}
    return pl.concat(frames) if frames else pl.DataFrame(schema=schema)


def read_players_found(lake: Path | str, text: str) -> pl.DataFrame:
    """`find_players` over the lake's player names and current lists."""
    names = read_table(lake, tables.PLAYER_NAMES).collect()
    if "name" not in names.columns:
        names = pl.DataFrame(schema={"player_id": pl.String, "name": pl.String})
    return find_players(names, text, current_list_rows(lake))


def list_year(period: str) -> int:
    """The year of FIDE's list of `period` (dated the first day of the next period)."""
    return int(next_period(period)[:4])


class MissingColumnError(LookupError):
    """A top-list filter needs a column the published list does not have."""


def top_list(
    rows: pl.DataFrame,
    period: str,
    *,
    federation: str | None = None,
    women: bool = False,
    juniors: bool = False,
) -> pl.DataFrame:
    """A top list from a list's rows: active players of `federation` (any if None), women only,
    juniors only, by rating (highest first, then id). The `rank` column, when the list has one,
    is the list's own rank; `position` is the place on this top list (ties share it).
    MissingColumnError if the list lacks a column a filter needs."""
    needed = {"federation": federation is not None, "sex": women, "birth_year": juniors}
    missing = [column for column, used in needed.items() if used and column not in rows.columns]
    if missing:
        raise MissingColumnError(
            f"this list has no {' or '.join(missing)} column (lists published before player "
            "data were carried); run 'ratings run' again to publish them"
        )
    kept = rows
    if "flag" in kept.columns:
        kept = kept.filter(~pl.col("flag").fill_null("").is_in(INACTIVE_FLAGS))
    if federation is not None:
        fed = pl.col("federation").fill_null("").str.to_uppercase()
        kept = kept.filter(fed == federation.upper())
    if women:
        kept = kept.filter(pl.col("sex").fill_null("").str.to_uppercase() == "F")
    if juniors:
        kept = kept.filter(pl.col("birth_year") >= list_year(period) - JUNIOR_AGE)
    kept = kept.sort(["rating", "player_id"], descending=[True, False], nulls_last=True)
    position = pl.col("rating").rank(method="min", descending=True).cast(pl.Int64)
    return kept.with_columns(position.alias("position")).select(
        "position", *[c for c in kept.columns if c != "position"]
    )
