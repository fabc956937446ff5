"""The bytes of a PGN file: a stream to read them from in bounded memory (decompressed `.gz` /
`.zst` data, a `.zst` checked whole first), the whole bytes of a small file for the python-chess
reference, and the Windows-1252 reading of a file that is not UTF-8 (older Windows programs wrote
those).
"""

from __future__ import annotations

import contextlib
import gzip
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from rating_core.ingest.common import UnreadableFileError
from rating_core.ingest.common import decode as decode  # re-exported for the PGN readers


def _compression(path: Path) -> str | None:
    """`gzip` or `zstd` by the file's last suffix in any case (`GAMES.PGN.GZ` is gzip), else None."""
    return {".gz": "gzip", ".zst": "zstd"}.get(path.suffix.lower())


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


ZSTD_WINDOW_MAX = 1 << 31
"""The largest zstd window a stream may ask for (zstd's own maximum, `zstd --long=31`): the
decoder holds one window of decompressed data, so a frame asking for more is refused by name."""

_ZSTD_MAGIC = 0xFD2FB528
_SKIPPABLE_FIRST, _SKIPPABLE_LAST = 0x184D2A50, 0x184D2A5F


def _truncated(label: str, kind: str) -> UnreadableFileError:
    return UnreadableFileError(
        f"{label}: truncated or corrupt {kind} data (the archive ends early or is "
        "damaged); replace it with a complete copy"
    )


def check_zstd_frames(path: Path, label: str, window_max: int = ZSTD_WINDOW_MAX) -> None:
    """Walk the frames of a `.zst` file by their block headers (RFC 8878 §3.1), without
    decompressing: a file that ends inside a frame is truncated, one whose frames need a
    window over `window_max` bytes is refused by that rule. zstd's streaming reader returns the
    data of a cut frame without a word, so this walk is what keeps a partial archive from being
    read as if it were all of it (a damaged block still fails in the decoder)."""
    import zstandard

    try:
        with path.open("rb") as handle:
            fd = handle.fileno()
            size = os.fstat(fd).st_size
            if size == 0:
                raise _truncated(label, "zstd")

            chunk = bytearray(1 << 18)
            held = [0, 0]  # the file's bytes [held[0], held[1]) are in `chunk`

            def at(pos: int, count: int) -> bytes:
                """`count` bytes at `pos`, read a quarter of a MiB at a time into one reused
                buffer (mapping the file instead would count every page the kernel reads
                ahead in this process's memory: 3 GB for a 3 GB archive)."""
                if pos < held[0] or pos + count > held[1]:
                    held[0], held[1] = pos, pos + os.preadv(fd, [chunk], pos)
                start = pos - held[0]
                return bytes(chunk[start : start + count])

            pos = 0
            while pos < size:
                if size - pos < 8:
                    raise _truncated(label, "zstd")
                magic = int.from_bytes(at(pos, 4), "little")
                if _SKIPPABLE_FIRST <= magic <= _SKIPPABLE_LAST:
                    pos += 8 + int.from_bytes(at(pos + 4, 4), "little")
                    continue
                if magic != _ZSTD_MAGIC:
                    raise _truncated(label, "zstd")
                head = at(pos, 18)
                params = zstandard.get_frame_parameters(head)
                if params.window_size > window_max:
                    raise UnreadableFileError(
                        f"{label}: a zstd frame asks for a {params.window_size >> 20} MiB "
                        f"window, over the {window_max >> 20} MiB this run allows "
                        "(raise --memory, or recompress without --long)"
                    )
                pos += zstandard.frame_header_size(head)
                while True:
                    if pos + 3 > size:
                        raise _truncated(label, "zstd")
                    header = int.from_bytes(at(pos, 3), "little")
                    kind, length = (header >> 1) & 3, header >> 3
                    if kind == 3:  # reserved block type: not zstd data
                        raise _truncated(label, "zstd")
                    pos += 3 + (1 if kind == 1 else length)
                    if header & 1:
                        break
                pos += 4 if params.has_checksum else 0
            if pos != size:
                raise _truncated(label, "zstd")
    except zstandard.ZstdError:
        raise _truncated(label, "zstd") from None
    except OSError as exc:
        raise UnreadableFileError(f"{label}: cannot read the file ({exc.strerror or exc})") from exc


@contextlib.contextmanager
def open_stream(path: Path, label: str, window_max: int = ZSTD_WINDOW_MAX) -> Iterator[Stream]:
    """The file's bytes as a `Stream` to `readinto` from, decompressed by its suffix (`.gz`,
    `.zst`: every frame, long-window frames up to `window_max`), in bounded memory whatever the
    size of the file or of what it expands to. A `.zst` file is checked whole first
    (`check_zstd_frames`); a truncated gzip stream fails at its end (an UnreadableFileError
    naming the file either way), so a caller that publishes only at the end never takes a part
    of the games for all of them."""
    kind = _compression(path)
    try:
        if kind == "zstd":
            check_zstd_frames(path, label, window_max)
        with path.open("rb") as raw:
            if kind == "zstd":
                import zstandard

                decoder = zstandard.ZstdDecompressor(max_window_size=window_max)
                reader = decoder.stream_reader(raw, read_size=1 << 20, read_across_frames=True)
                yield Stream(reader, raw, label, kind)
            elif kind == "gzip":
                if os.fstat(raw.fileno()).st_size == 0:  # a download cut at 0 %
                    raise _truncated(label, "gzip")
                yield Stream(gzip.GzipFile(fileobj=raw, mode="rb"), raw, label, kind)
            else:
                yield Stream(raw, raw, label, None)
    except OSError as exc:
        raise UnreadableFileError(f"{label}: cannot read the file ({exc.strerror or exc})") from exc


class Stream:
    """A file's (decompressed) bytes to `readinto` from, with how far into the file on disk it
    has read (`position`, for progress); a cut or damaged archive is one sentence naming it."""

    def __init__(self, stream: object, raw: BinaryIO, label: str, kind: str | None) -> None:
        self._stream, self._raw, self._label, self._kind = stream, raw, label, kind

    def readinto(self, buffer: memoryview) -> int:
        try:
            return self._stream.readinto(buffer)  # type: ignore[attr-defined]
        except Exception as exc:  # OSError; EOFError, zlib.error, zstandard.ZstdError
            if self._kind is None:
                why = getattr(exc, "strerror", None) or exc
                raise UnreadableFileError(f"{self._label}: cannot read the file ({why})") from exc
            raise _truncated(self._label, self._kind) from None

    def size(self) -> int:
        """Bytes of the file on disk."""
        return os.fstat(self._raw.fileno()).st_size

    def position(self) -> int:
        """Bytes of the file on disk read so far."""
        try:
            return self._raw.tell()
        except (OSError, ValueError):
            return 0


def file_stem(source_file: str) -> str:
    """The file name without directories, compression suffix and `.pgn` (for derived game ids)."""
    name = Path(source_file).name
    if _compression(Path(name)):
        name = name[: -len(Path(name).suffix)]
    return Path(name).stem
