"""The bytes of a PGN file: a memory map of a plain file, decompressed `.gz` / `.zst` data, and
the Windows-1252 reading of a file that is not UTF-8 (older Windows programs wrote those).
"""

from __future__ import annotations

import codecs
import gzip
import mmap
import os
from pathlib import Path

import numpy as np

from rating_core.ingest.common import UnreadableFileError


def _compression(path: Path) -> str | None:
    """`gzip` or `zstd` by the file's last suffix in any case (`GAMES.PGN.GZ` is gzip), else None."""
    return {".gz": "gzip", ".zst": "zstd"}.get(path.suffix.lower())


def read_buffer(path: Path, label: str) -> np.ndarray:
    """The file's bytes as a read-only uint8 array: a memory map of a plain file (no copy; its
    pages are mapped as the scanner threads first touch them, in parallel), the decompressed
    bytes of a `.gz` or `.zst` file. `label` names the file in errors."""
    if _compression(path):
        return np.frombuffer(read_bytes(path, label), dtype=np.uint8)
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size == 0:
                return np.frombuffer(b"", dtype=np.uint8)
            mapped = mmap.mmap(handle.fileno(), size, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ)
            if hasattr(mmap, "MADV_WILLNEED"):  # start reading a file that is not cached yet
                mapped.madvise(mmap.MADV_WILLNEED)
    except OSError as exc:
        raise UnreadableFileError(f"{label}: cannot read the file ({exc.strerror or exc})") from exc
    return np.frombuffer(mapped, dtype=np.uint8)  # the array keeps the map open


def _zstd_frames(raw: bytes) -> bytes:
    """Every frame of a zstd stream, decompressed; ValueError when the last frame stops early
    (a plain `decompressobj` reads only the first frame and accepts a cut one silently)."""
    import zstandard

    out: list[bytes] = []
    rest = raw
    while rest:
        frame = zstandard.ZstdDecompressor().decompressobj()
        out.append(frame.decompress(rest))
        if not frame.eof:
            raise ValueError("the last frame ends early")
        rest = frame.unused_data
    return b"".join(out)


def read_bytes(path: Path, label: str | None = None) -> bytes:
    """The file's bytes, decompressed according to its suffix (`.gz`, `.zst`, any case).

    A truncated or corrupt archive is an UnreadableFileError naming the file (`label`, default
    the path): a part of the games must never be read as if it were all of them.
    """
    label = str(path) if label is None else label
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UnreadableFileError(f"{label}: cannot read the file ({exc.strerror or exc})") from exc
    kind = _compression(path)
    if kind is None:
        return raw
    try:
        if not raw:  # not even an archive header: a download cut at 0 %
            raise ValueError("no data")
        return gzip.decompress(raw) if kind == "gzip" else _zstd_frames(raw)
    except Exception:  # EOFError, zlib.error, gzip.BadGzipFile, zstandard.ZstdError, ValueError
        raise UnreadableFileError(
            f"{label}: truncated or corrupt {kind} data (the archive ends early or is "
            "damaged); replace it with a complete copy"
        ) from None


def _cp1252(error: UnicodeError) -> tuple[str, int]:
    """Decode error handler: the five bytes Windows-1252 leaves undefined read as Latin-1."""
    assert isinstance(error, UnicodeDecodeError)  # registered for decoding only
    return error.object[error.start : error.end].decode("latin-1"), error.end


codecs.register_error("ratings_latin1", _cp1252)


def decode(data: bytes) -> tuple[str, bool]:
    """Text of the file and whether it was not UTF-8: the whole file is then read as
    Windows-1252 (its undefined bytes as Latin-1), as PGN from older Windows programs is."""
    try:
        text = data.decode("utf-8")
        legacy = False
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="ratings_latin1")
        legacy = True
    return text.removeprefix("\ufeff"), legacy


def file_stem(source_file: str) -> str:
    """The file name without directories, compression suffix and `.pgn` (for derived game ids)."""
    name = Path(source_file).name
    if _compression(Path(name)):
        name = name[: -len(Path(name).suffix)]
    return Path(name).stem


def nul_lines(buf: np.ndarray) -> np.ndarray | None:
    """Line numbers of the NUL bytes of the file (None when it has none, the usual case: a
    memchr over the memory map or the bytes, no copy)."""
    owner = buf.base.obj if isinstance(buf.base, memoryview) else buf.base
    if isinstance(owner, (bytes, mmap.mmap)):
        if owner.find(b"\0") < 0:
            return None
    elif not (buf == 0).any():
        return None
    newlines = np.flatnonzero(buf == 10)
    return np.searchsorted(newlines, np.flatnonzero(buf == 0)) + 1
