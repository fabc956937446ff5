"""Starting lists as FIDE publishes them: `federation/lists/fide-<kind>@YYYY-MM.txt` (FIDE's
fixed-width TXT, one list or the combined standard/rapid/blitz file) and `.xml` (FIDE's
`playerslist` XML, one list or combined).

The TXT is cut into its fixed-width columns with Polars expressions over the whole file (no
per-player Python), each field checked to lie in its column; the XML is read by lxml's streaming
parser with entities, DTDs and the network off (never regular expressions: a comment or an
attribute is XML's business). Either may come zipped (`.zip`, FIDE's own downloads). Rows are
STARTING_LIST_SCHEMA, the player data (federation, sex, titles, birth year, flag) included. Unlike a CSV starting list (all or nothing), a FIDE download holds
every player of the world, so a malformed line is quarantined with its line, value and reason
and the other players still land; players with no rating on the list the file name says are not
on it (counted in a note). The K a FIDE file gives becomes a career count and a peak
(`formats.inferred_career`).
"""

from __future__ import annotations

import codecs
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import polars as pl
from lxml import etree

from rating_core.ingest.common import IngestResult, UnreadableFileError, decode_noted
from rating_core.ingest.csv_games import LINE, Check, apply_checks, null_if_empty, parse_int
from rating_core.periods import next_period
from rating_core.schemas import QUARANTINE_SCHEMA, STARTING_LIST_SCHEMA, conform
from rating_core.systems.fide.formats import (
    fide_month_label,
    inferred_career,
    period_of_month_label,
    txt_layout,
)
from rating_core.systems.fide.rules import rules_for_period
from rating_core.text import format_text

MAX_RATING = 3500

_TXT_PREFIX = {"standard": "s", "rapid": "r", "blitz": "b"}
"""Letter of each list in the combined TXT's columns (SRtng, RGm, BK...)."""
_XML_PREFIX = {"standard": "", "rapid": "rapid_", "blitz": "blitz_"}
"""Prefix of each list's elements in the combined XML (rating, rapid_rating, blitz_k...)."""


PLAYER_FIELDS = (
    "name",
    "federation",
    "sex",
    "title",
    "w_title",
    "o_title",
    "foa_title",
    "flag",
)
"""The player data a FIDE file gives beside the rating, kept on the starting list (the TXT's
Fed, Sex, Tit, WTit, OTit, FOA and Flag columns; the XML's country, sex, title, w_title, o_title,
foa_title and flag elements), the name as FIDE writes it among them."""

_TXT_PLAYER_LABELS = {
    "name": "name",
    "federation": "fed",
    "sex": "sex",
    "title": "tit",
    "w_title": "wtit",
    "o_title": "otit",
    "foa_title": "foa",
    "flag": "flag",
}
_XML_PLAYER_ELEMENTS = {
    "name": "name",
    "federation": "country",
    "sex": "sex",
    "title": "title",
    "w_title": "w_title",
    "o_title": "o_title",
    "foa_title": "foa_title",
    "flag": "flag",
}

CUT = "_cut"
"""Column of TXT fields: why the line's fixed-width columns cannot be trusted (null when they
can): a line cut short inside a rating or games column, or a value running into the next
column."""

XML_CHUNK = 1 << 20
"""Bytes of the XML fed to the parser at a time."""
XML_BATCH = 50_000
"""Players gathered from the XML stream before they become a frame: memory follows the batch,
not the file."""


def _is_utf8(chunks: Iterator[bytes]) -> bool:
    """Whether a stream of bytes is UTF-8, read chunk by chunk (never the whole file)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for chunk in chunks:
            decoder.decode(chunk)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


@contextmanager
def _opened(path: Path, source_file: str) -> Iterator[tuple[str, Callable[[], IO[bytes]]]]:
    """(the format, `.txt` or `.xml`, and a function opening its bytes) of a FIDE download: the
    file itself, or the one TXT or XML member of a `.zip` as FIDE distributes them (read from the
    archive as a stream, never unpacked to disk)."""
    if path.suffix.lower() != ".zip":
        yield path.suffix.lower(), lambda: path.open("rb")
        return
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as error:
        raise UnreadableFileError(f"{source_file}: not a readable zip archive ({error})") from error
    with archive:
        members = [
            m
            for m in archive.infolist()
            if not m.is_dir() and Path(m.filename).suffix.lower() in (".txt", ".xml")
        ]
        if len(members) != 1:
            found = ", ".join(m.filename for m in archive.infolist()) or "nothing"
            raise UnreadableFileError(
                f"{source_file}: a zipped FIDE list must hold exactly one .txt or .xml file "
                f"(it holds {found})"
            )
        member = members[0]
        yield Path(member.filename).suffix.lower(), lambda: archive.open(member)


def _txt_fields(
    text: str, source_file: str, kind: str, period: str
) -> tuple[pl.DataFrame, dict[str, str]]:
    """(the TXT's player lines as String columns fideid, rating, games, k, birthday, the player
    fields, `LINE` and `CUT`; the header label of each field), the columns found from the header
    line (`txt_layout`).

    FIDE's lines are fixed width, so each field is checked to lie in its column: a line that ends
    inside a rating or games column (every FIDE line goes on past them), or a per-list line that
    ends before its rating column ends, was cut short; a number whose column's last character is
    not blank runs into the next column. Either puts the reason in `CUT`.
    """
    lines = text.splitlines()
    header = lines[0] if lines else ""
    if not header.lower().startswith("id number"):
        raise UnreadableFileError(
            f"{source_file}: not FIDE's TXT rating list (its first line must be the header "
            "beginning 'ID Number')"
        )
    columns = {c.label.lower(): c for c in txt_layout(header)}
    letter = _TXT_PREFIX[kind]
    combined = f"{letter}rtng" in columns
    if combined:  # the combined list: this list's own three columns
        wanted = {"rating": f"{letter}rtng", "games": f"{letter}gm", "k": f"{letter}k"}
    else:
        months = [c for c in columns.values() if period_of_month_label(c.label)]
        if not months:
            raise UnreadableFileError(
                f"{source_file}: the header has no rating column (a month such as "
                f"{fide_month_label(period)}, or SRtng/RRtng/BRtng)"
            )
        month = months[0].label
        if period_of_month_label(month) != period:
            raise UnreadableFileError(
                f"{source_file}: its rating column is headed {month}, FIDE's list of the first "
                f"of that month, which is official after {period_of_month_label(month)}; name "
                f"the file fide-{kind}@{period_of_month_label(month)}{Path(source_file).suffix}"
            )
        wanted = {"rating": month.lower(), "games": "gms", "k": "k"}
    wanted = {"fideid": "id number", **wanted, "birthday": "b-day", **_TXT_PLAYER_LABELS}

    text_col = pl.col("text")
    length = text_col.str.len_chars()

    def cut(label: str) -> pl.Expr:
        column = columns.get(label)
        if column is None:
            return pl.lit("")
        width = None if column.end is None else column.end - column.start
        return text_col.str.slice(column.start, width).str.strip_chars()

    problems: list[pl.Expr] = []
    for name in ("fideid", "rating", "games", "k"):
        column = columns.get(wanted[name])
        if column is None or column.end is None:
            continue
        last = text_col.str.slice(column.end - 1, 1)
        problems.append(
            pl.when((length >= column.end) & (last != " ")).then(
                pl.lit(
                    f"the {column.label} value runs into the next column (character "
                    f"{column.end} is not blank): the line does not follow FIDE's columns"
                )
            )
        )
        inside = (length > column.start) & (length < column.end)
        if name == "rating" and not combined:
            inside = length < column.end  # a per-list line always goes on past its rating
        if name in ("rating", "games"):
            problems.append(
                pl.when(inside).then(
                    format_text(
                        f"the line is cut short: it ends at character {{}}, inside the "
                        f"{column.label} column (characters {column.start + 1}-{column.end})",
                        length,
                    )
                )
            )
    frame = pl.DataFrame({"text": lines[1:]}, schema={"text": pl.String}).with_row_index(
        LINE, offset=2
    )
    fields = frame.filter(text_col.str.strip_chars() != "").select(
        pl.col(LINE).cast(pl.Int64),
        *[cut(label).alias(name) for name, label in wanted.items()],
        pl.coalesce(*problems, pl.lit(None, dtype=pl.String)).alias(CUT),
    )
    if not fields.height:
        raise UnreadableFileError(
            f"{source_file}: FIDE's TXT list holds its header and no player line; an official "
            "list without players would silently replace nothing"
        )
    labels = {
        name: columns[label].label if label in columns else label for name, label in wanted.items()
    }
    return fields, labels


class _XmlReader:
    """FIDE's `playerslist` XML read by lxml's streaming parser (`XMLPullParser`, fed
    `XML_CHUNK` bytes at a time): entities are not resolved, no DTD or network is loaded, and
    each `player` element is dropped once read, so memory follows `XML_BATCH` players, not the
    file. Comments and attributes are XML's own, so a
    player inside a comment is no player and an attribute changes nothing."""

    def __init__(self, source_file: str, kind: str) -> None:
        self.source_file = source_file
        self.kind = kind
        self.batches: list[pl.DataFrame] = []
        self.broken: pl.DataFrame | None = None
        self.prefix: str | None = None

    def read(self, stream: IO[bytes], encoding: str | None) -> None:
        """Read every player of the stream into `batches`; a place where the file stops being
        well-formed XML becomes one quarantine row (`broken`), the players before it landing.

        Only the `player` elements raise events (lxml filters the others in C), so the Python
        work is one step per player."""
        self._rows: list[tuple] = []
        self._tags: list[str] = []
        self._root: bool | None = None  # None until the first player: is its parent the root?
        self._player: Any = None
        parser = etree.XMLPullParser(
            events=("start", "end"),
            tag="player",
            resolve_entities=False,
            load_dtd=False,
            no_network=True,
            huge_tree=False,
            encoding=encoding,
            remove_comments=True,
            remove_pis=True,
        )
        try:
            for chunk in iter(lambda: stream.read(XML_CHUNK), b""):
                parser.feed(chunk)
                if not self._events(parser):
                    break
            else:
                root = parser.close()
                self._events(parser)
                if self._root is None:
                    self._root = root is not None and root.tag == "playerslist"
        except etree.XMLSyntaxError as error:
            self._events(parser)  # the players before the error still land
            if self._root is None:
                raise UnreadableFileError(
                    f"{self.source_file}: not well-formed XML before its first player ({error.msg})"
                ) from error
            if self._root:
                self._broken(error, self._player)
        if not self._root:
            raise UnreadableFileError(
                f"{self.source_file}: not FIDE's XML rating list (no <playerslist> root element)"
            )
        self._flush(self._rows)

    def _events(self, parser: Any) -> bool:
        """Take the players of the events parsed so far; False once the root is not FIDE's."""
        for event, element in parser.read_events():
            parent = element.getparent()
            if self._root is None:
                self._root = (
                    parent is not None
                    and parent.tag == "playerslist"
                    and parent.getparent() is None
                )
            if not self._root:
                return False
            if event == "start":
                if self._player is None and parent is not None and parent.getparent() is None:
                    self._player = element
                continue
            if element is not self._player:
                continue
            self._take(element, self._rows)
            self._player = None
            element.clear(keep_tail=False)
            while element.getprevious() is not None:
                del parent[0]
            if len(self._rows) >= XML_BATCH:
                self._flush(self._rows)
        return True

    def _take(self, element: Any, rows: list[tuple]) -> None:
        """One player: its line and the text of the child elements of `_XML_ALL` (None when
        absent; stripped later, in the frame)."""
        values = {child.tag: child.text for child in element}
        if self.prefix is None:
            self.prefix = (
                _XML_PREFIX[self.kind] if f"{_XML_PREFIX[self.kind]}rating" in values else ""
            )
            self._tags = [self._element(name) for name in _XML_ALL]
        get = values.get
        rows.append((element.sourceline, *[get(tag) for tag in self._tags]))

    def _element(self, field: str) -> str:
        if field in ("rating", "games", "k"):
            return f"{self.prefix or ''}{field}"
        return _XML_PLAYER_ELEMENTS.get(field, field)

    def _flush(self, rows: list[tuple]) -> None:
        if rows:
            schema = {LINE: pl.Int64, **{name: pl.String for name in _XML_ALL}}
            frame = pl.DataFrame(rows, schema=schema, orient="row")
            self.batches.append(
                frame.with_columns(pl.col(_XML_ALL).fill_null("").str.strip_chars())
            )
            rows.clear()

    def _broken(self, error: Any, player: Any) -> None:
        """The quarantine row of the place the XML stops being well-formed."""
        line = player.sourceline if player is not None else (error.position[0] or None)
        record = None
        if player is not None:
            found = player.find("fideid")
            record = (found.text or "").strip() if found is not None else None
        what = "the <player> element starting here" if player is not None else "the file"
        self.broken = pl.DataFrame(
            {
                "source_file": [self.source_file],
                "line": [line],
                "record": [record],
                "value": [str(error.msg)[:120]],
                "reason": [
                    f"{what} is not well-formed XML ({error.msg}); it and anything after it "
                    "are not read"
                ],
            },
            schema=QUARANTINE_SCHEMA,
        )

    def labels(self) -> dict[str, str]:
        return {name: self._element(name) for name in _XML_ALL}


_XML_ALL = ("fideid", "rating", "games", "k", "birthday", *PLAYER_FIELDS)


def _xml_fields(
    opener: Callable[[], IO[bytes]], source_file: str, kind: str
) -> tuple[pl.DataFrame, dict[str, str], pl.DataFrame | None, tuple[str, ...]]:
    """(the XML's `player` elements as String columns, with `LINE` the line each starts on; the
    element name of each field; the quarantine row of a place that is not well-formed XML; the
    notes). A file that is not UTF-8 is read as Windows-1252, with a note."""
    with opener() as stream:
        utf8 = _is_utf8(iter(lambda: stream.read(1 << 20), b""))
    notes: tuple[str, ...] = ()
    if not utf8:
        notes = (f"{source_file}: not UTF-8; read as Windows-1252",)
    reader = _XmlReader(source_file, kind)
    with opener() as stream:
        reader.read(stream, None if utf8 else "windows-1252")
    schema = {LINE: pl.Int64, **{name: pl.String for name in _XML_ALL}}
    fields = pl.concat(reader.batches) if reader.batches else pl.DataFrame(schema=schema)
    return (
        fields.with_columns(pl.lit(None, dtype=pl.String).alias(CUT)),
        reader.labels(),
        reader.broken,
        notes,
    )


def _checks(labels: dict[str, str]) -> list[Check]:
    """The rules of one FIDE player record; `labels` names each field as the file does."""

    def integer(field: str, low: int, high: int | None) -> Check:
        value = parse_int(field)
        bad = value.is_null() | (value < low)
        if high is not None:
            bad = bad | (value > high)
        wanted = f"from {low} to {high}" if high is not None else f"of at least {low}"
        return Check(
            (pl.col(field) != "") & bad.fill_null(True),
            pl.col(field),
            format_text(f"{labels[field]} '{{}}' is not a whole number {wanted}", pl.col(field)),
        )

    fideid = pl.col("fideid")
    first_line = pl.col(LINE).min().over("fideid")
    year = pl.col("birthday")
    return [
        Check(pl.col(CUT).is_not_null(), pl.col("rating"), pl.col(CUT)),
        Check(fideid == "", fideid, pl.lit(f"{labels['fideid']} is empty")),
        Check(
            ~fideid.str.contains(r"^[0-9]+$"),
            fideid,
            format_text(f"{labels['fideid']} '{{}}' is not a FIDE number (digits only)", fideid),
        ),
        integer("rating", 0, MAX_RATING),
        integer("games", 0, None),
        integer("k", 0, 100),
        Check(
            (year != "")
            & ~year.is_in(["0", "0000"])
            & ~year.str.contains(r"^[0-9]{4}(-[0-9]{2}-[0-9]{2})?$"),
            year,
            format_text(f"{labels['birthday']} '{{}}' is not a year (YYYY)", year),
        ),
        Check(
            pl.col(LINE) != first_line,
            fideid,
            format_text("player '{}' appears again (first on line {})", fideid, first_line),
        ),
    ]


def read_fide_list(path: Path, list_name: str, period: str, source_file: str) -> IngestResult:
    """Read FIDE's TXT or XML download `<list>@<period>.txt|.xml` (or either zipped, `.zip`, as
    FIDE distributes them) into STARTING_LIST_SCHEMA rows.

    The rating, games and K are those of the list the file name says (`fide-rapid@...` reads the
    rapid columns of a combined file); the ID number is the player id; federation, sex, titles,
    birth year and flag are kept as the file gives them. Raises `UnreadableFileError` for a file
    that is not FIDE's format, that holds no player, or whose rating column is headed by a month
    that does not match the file name.
    """
    if not list_name.startswith("fide-"):
        raise UnreadableFileError(
            f"{source_file}: FIDE's TXT and XML files hold FIDE lists; a {list_name} starting "
            "list must be a CSV"
        )
    kind = list_name.removeprefix("fide-")
    broken = None
    with _opened(path, source_file) as (suffix, opener):
        if suffix == ".txt":
            with opener() as stream:
                text, notes = decode_noted(stream.read(), source_file)
            fields, labels = _txt_fields(text, source_file, kind, period)
            del text
        else:
            fields, labels, broken, notes = _xml_fields(opener, source_file, kind)
    good, quarantine = apply_checks(fields, _checks(labels), "fideid", source_file)
    if broken is not None:
        quarantine = pl.concat([quarantine, broken.cast(quarantine.schema)]).sort("line")
    if not fields.height and broken is None:
        raise UnreadableFileError(
            f"{source_file}: FIDE's XML list holds no <player> element; an official list without "
            "players would silently replace nothing"
        )
    typed = good.select(
        pl.col("fideid").alias("player_id"),
        parse_int("rating").fill_null(0).alias("rating"),
        parse_int("games").alias("games"),
        parse_int("k").alias("k"),
        pl.col("birthday").str.slice(0, 4).cast(pl.Int32, strict=False).alias("birth_year"),
        *[null_if_empty(name).alias(name) for name in PLAYER_FIELDS],
    ).with_columns(
        pl.when(pl.col("birth_year") > 0).then(pl.col("birth_year")).alias("birth_year"),
        pl.col("sex").str.to_uppercase(),
        pl.col("flag").str.to_lowercase(),
    )
    rated = typed.filter(pl.col("rating") > 0)
    unrated = typed.height - rated.height
    if unrated:
        notes += (
            f"{source_file}: {unrated} player{'s' if unrated > 1 else ''} without a {kind} "
            "rating, not on the list",
        )
    following = next_period(period)  # the K a list gives is the one in force next period
    rated_games, peak = inferred_career(int(following[:4]), rules_for_period(following, kind))
    rows = rated.select(
        pl.lit(list_name).alias("list"),
        pl.lit(period).alias("period"),
        "player_id",
        pl.col("rating").cast(pl.Int32),
        rated_games.alias("rated_games"),
        peak.alias("peak_rating"),
        "birth_year",
        *PLAYER_FIELDS,
    )
    return IngestResult(
        rows=conform(rows, STARTING_LIST_SCHEMA), quarantine=quarantine, notes=notes
    )


def read_fide_list_lines(path: Path, list_name: str, period: str, source_file: str) -> pl.DataFrame:
    """The rated players of FIDE's TXT or XML download as published: player_id, rating, games and
    K of the list the name says (`ratings reconcile` compares them with ours), after the same
    checks as `read_fide_list` (a malformed line is left out; read_fide_list quarantines it)."""
    kind = list_name.removeprefix("fide-")
    with _opened(path, source_file) as (suffix, opener):
        if suffix == ".txt":
            with opener() as stream:
                text, _ = decode_noted(stream.read(), source_file)
            fields, labels = _txt_fields(text, source_file, kind, period)
        else:
            fields, labels, _, _ = _xml_fields(opener, source_file, kind)
    good, _ = apply_checks(fields, _checks(labels), "fideid", source_file)
    return good.select(
        pl.col("fideid").alias("player_id"),
        parse_int("rating").fill_null(0).cast(pl.Int64).alias("rating"),
        parse_int("games").cast(pl.Int64).alias("games"),
        parse_int("k").cast(pl.Int64).alias("k"),
    ).filter(pl.col("rating") > 0)
