"""The inbox files each period's platform games and backgammon matches come from, each with a
digest of what it gives the period: what a site or FIBS list version names when a file was
removed, changed or added since the last publication (`input_causes.file_causes`, issue 31
item 1), found without reading the games again.

A platform file's games of a period are one file of the lake (`games/period=P/part-<group>.parquet`,
the ingest store's): its content hash (recorded with its stamp, `facts.content_hashes`: the
run's period digests hashed it already) is the digest, and `ingest_files` names the inbox file.
The backgammon matches, read whole each run and small beside a platform's month, are hashed
per file from their rows.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import polars as pl

from rating_core import tables
from rating_core.ingest.inbox import group_source
from rating_core.lake import facts
from rating_core.lake.storage import partition_files, read_table

FILE_INPUTS_SCHEMA = {"period": pl.String, "name": pl.String, "digest": pl.String}
"""One row per period and inbox file with records in it: the file's name and a digest of them."""

_PART_PREFIX, _PART_SUFFIX = "part-", ".parquet"


def platform_game_files(lake: Path, periods: list[str]) -> pl.DataFrame:
    """For each of `periods`, every platform file with games in it and the content hash of its
    games' file in the lake (FILE_INPUTS_SCHEMA): the games are not read."""
    records = read_table(lake, tables.INGEST_FILES).collect()
    named = dict(zip(records.get_column("group"), records.get_column("file"), strict=True))
    platform = {key: name for key, name in named.items() if group_source(key) == "platform"}
    parts: list[tuple[str, str, Path]] = []
    for period in periods:
        for path in partition_files(lake, tables.GAMES, period):
            key = path.name.removeprefix(_PART_PREFIX).removesuffix(_PART_SUFFIX)
            if key in platform:
                parts.append((period, platform[key], path))
    hashes = facts.content_hashes(lake, [path for _, _, path in parts])
    rows = [
        {"period": period, "name": name, "digest": hashes[path].hex()}
        for period, name, path in parts
        if path in hashes
    ]
    return pl.DataFrame(rows, schema=FILE_INPUTS_SCHEMA)


def backgammon_match_files(lake: Path, periods: list[str]) -> pl.DataFrame:
    """For each of `periods`, every backgammon file with matches in it and a digest of those
    matches (FILE_INPUTS_SCHEMA): one hash per period and file, not per match."""
    matches = read_table(lake, tables.MATCHES, periods).collect()
    if not matches.height:
        return pl.DataFrame(schema=FILE_INPUTS_SCHEMA)
    skipped = ("period", "source_file", "source_line")  # lines moved by an edit above: same
    columns = [c for c in matches.columns if c not in skipped]
    text = pl.concat_str(
        [pl.col(c).cast(pl.String).fill_null("") for c in columns], separator="\x1f"
    )
    grouped = (
        matches.with_columns(text.alias("_match"))
        .group_by("period", "source_file")
        .agg(pl.col("_match").sort().str.join("\x1e"))
        .sort("period", "source_file")
    )
    digests = [
        hashlib.sha256(joined.encode("utf-8")).hexdigest()
        for joined in grouped.get_column("_match")
    ]
    return grouped.select(
        pl.col("period").cast(pl.String),
        pl.col("source_file").alias("name"),
        pl.Series("digest", digests, dtype=pl.String),
    )
