"""Errors as a person reads them: one `ratings:` sentence, never a traceback or a class name.

Every failure the command line reports goes through `describe_exception` (a live exception) or
`describe_error_info` (Dagster's serialized copy of one, from a failed step). Both reduce the error
chain to plain facts (class name, message, errno, path) and `explain` turns those into a sentence:
a user mistake is its own message, a full disk or a denied permission says so with the path, and
anything else is a short "internal error" line pointing at `RATINGS_DEBUG=1` for the traceback.
"""

from __future__ import annotations

import errno as errnos
import os
import re
from dataclasses import dataclass
from typing import Any, Protocol

DEBUG_ENV = "RATINGS_DEBUG"
"""Set to 1 to see the traceback of an internal error (the sentence alone hides it)."""


class UserError(Exception):
    """A user mistake (bad argument, missing folder): printed as one sentence, exit status 2."""


USER_FACING = frozenset(
    {"UserError", "UnreadableFileError", "MergeChainError", "ArgumentError", "OverBudgetError"}
)
"""Exception classes whose message is written for a person (it names the file, column or value)."""

_DECODING = {
    "EOFError": "compressed data that ends too early (a truncated file?)",
    "error": "corrupt compressed data",  # zlib.error
    "BadGzipFile": "a file that is not valid gzip data",
    "ZstdError": "corrupt zstd data",
    "UnicodeDecodeError": "text that is not valid UTF-8",
}
"""Low-level decoding errors, in words, for when no reader turned them into a sentence."""

_DISK_FULL = frozenset({errnos.ENOSPC, getattr(errnos, "EDQUOT", errnos.ENOSPC)})
_DENIED = frozenset({errnos.EACCES, errnos.EPERM})

_ERRNO_IN_TEXT = re.compile(r"\[Errno (?P<n>\d+)\][^:]*(?::\s*'(?P<path>[^']*)')?")
"""Python's `str(OSError)`: `[Errno 28] No space left on device: '/lake/x'`."""
_OS_ERROR_IN_TEXT = re.compile(r"\(os error (?P<n>\d+)\)(?::\s*(?P<path>\S.*))?")
"""Polars' and Arrow's (Rust) form: `No space left on device (os error 28): /lake/x`."""
_CLASS_NAME = re.compile(
    r"(?<![\w/.-])(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning)\b(?!\.\w)(?::\s*)?"
    r"|(?<![\w/.-])(?:[a-z_]\w*\.)+error\b(?!\.\w)(?::\s*)?"
)
"""A Python class name in a message (`polars.exceptions.ComputeError: `, `ValueError`), not a
file name that happens to end like one (`platform/MyError.csv`)."""
_SQLITE_FULL = "database or disk is full"
"""sqlite's SQLITE_FULL, as its Python driver words it."""
_DAMAGED_FILE = ("invalid thrift", "out of specification", "must end with par1", "corrupt")


@dataclass(frozen=True)
class ErrorFacts:
    """One link of an error chain, as plain facts: enough to explain it without the object."""

    cls_name: str
    text: str
    errno: int | None = None
    filename: str | None = None


class SerializedError(Protocol):
    """Dagster's `SerializableErrorInfo` (a failed step's error, its cause and context), whose
    fields are read-only."""

    @property
    def message(self) -> str: ...

    @property
    def cls_name(self) -> str | None: ...

    @property
    def cause(self) -> Any: ...

    @property
    def context(self) -> Any: ...


def debug_enabled() -> bool:
    """True when the user asked for tracebacks (`RATINGS_DEBUG=1`)."""
    return os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no")


def _without_class_prefix(message: str, cls_name: str) -> str:
    """`module.Class: text` (as tracebacks print an exception) becomes `text`."""
    text = message.strip()
    match = re.match(rf"^(?:[\w.]*\.)?{re.escape(cls_name)}(?::\s*|$)", text)
    return text[match.end() :] if match else text


def _os_facts(text: str) -> tuple[int | None, str | None]:
    """The errno and path a message states, in Python's or in Rust's wording."""
    for pattern in (_ERRNO_IN_TEXT, _OS_ERROR_IN_TEXT):
        match = pattern.search(text)
        if match:
            path = match.group("path")
            return int(match.group("n")), path.strip() if path else None
    return None, None


def facts_of_exception(exc: BaseException) -> list[ErrorFacts]:
    """The chain of a live exception, outermost first (its `__cause__` or `__context__`),
    without Dagster's own wrappers."""
    chain: list[ErrorFacts] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        text = str(current)
        number, path = _os_facts(text)
        if isinstance(current, OSError):
            number = current.errno if current.errno is not None else number
            path = str(current.filename) if current.filename is not None else path
            text = current.strerror or text
        chain.append(ErrorFacts(type(current).__name__, text, number, path))
        if current.__cause__ is not None:
            current = current.__cause__
        elif not current.__suppress_context__:
            current = current.__context__
        else:
            current = None
    return _without_wrappers(chain)


def _without_wrappers(chain: list[ErrorFacts]) -> list[ErrorFacts]:
    """The chain without Dagster's own wrappers (`DagsterExecutionStepExecutionError` around
    the asset's error): the error user code raised is the one that explains the failure."""
    links = [facts for facts in chain if not facts.cls_name.startswith("Dagster")]
    return links or chain[-1:]


def facts_of_error_info(info: SerializedError) -> list[ErrorFacts]:
    """The chain of a Dagster error (a failed step's), outermost first, without Dagster's own
    wrappers."""
    chain: list[ErrorFacts] = []
    current: SerializedError | None = info
    while current is not None:
        cls_name = current.cls_name or ""
        text = _without_class_prefix(current.message or "", cls_name)
        number, path = _os_facts(text)
        if number is not None:
            text = re.sub(r"^\[Errno \d+\]\s*", "", text)
            text = re.sub(r":\s*'[^']*'$", "", text)
        chain.append(ErrorFacts(cls_name, text, number, path))
        current = current.cause or current.context
    return _without_wrappers(chain)


def plain(text: str) -> str:
    """One line of a message, without Python class names or a trailing period."""
    first = next((line.strip() for line in text.strip().splitlines() if line.strip()), "")
    first = _CLASS_NAME.sub("", first).strip()
    return re.sub(r"\s+", " ", first).rstrip(".").strip()


def _shown_path(path: str) -> str:
    """The path to name: a hidden temporary file (`.x.parquet.tmp-1f2e`) is named by its folder."""
    name = os.path.basename(path.rstrip("/"))
    if name.startswith(".") or ".tmp" in name or name.endswith(".partial"):
        return os.path.dirname(path.rstrip("/")) or path
    return path


def _environment(facts: ErrorFacts) -> str | None:
    """A sentence for a fault of the machine (full disk, denied permission, missing path)."""
    number = facts.errno
    if number is None:
        return None
    target = f"'{_shown_path(facts.filename)}'" if facts.filename else None
    if number in _DISK_FULL:
        at = f" writing in {target}" if target else ""
        return f"the disk is full (no space left on the device){at}; free some space and run again"
    if number in _DENIED:
        return f"permission denied on {target}" if target else "permission denied (no path given)"
    if number == errnos.ENOENT:
        return f"{target} does not exist" if target else "a file or folder does not exist"
    if number == errnos.EROFS:
        return f"{target or 'the lake'} is on a read-only disk"
    if number == errnos.ENOTDIR:
        return f"a part of {target or 'a path'} is a file, not a folder"
    if number == errnos.EISDIR:
        return f"{target or 'a path'} is a folder, not a file"
    reason = os.strerror(number).lower()
    return f"{reason} on {target}" if target else reason


def _internal(facts: ErrorFacts, where: str) -> str:
    text = plain(facts.text) or facts.cls_name or "unexpected failure"
    return f"internal error in {where}: {text}; rerun with {DEBUG_ENV}=1 for the traceback"


def explain(chain: list[ErrorFacts], where: str) -> str:
    """The one sentence for an error chain met while doing `where` (a step or a command)."""
    if not chain:
        return f"{where} failed"
    outer = chain[0]
    if outer.cls_name in USER_FACING:
        return plain(outer.text) or f"{where} failed"
    for facts in chain:
        sentence = _environment(facts)
        if sentence is not None:
            return sentence
    for facts in chain:  # sqlite (the Dagster instance) says it in words, without an errno
        if _SQLITE_FULL in facts.text.lower():
            return _environment(ErrorFacts(facts.cls_name, facts.text, errnos.ENOSPC)) or ""
    for facts in chain:
        if facts.cls_name in _DECODING:
            detail = plain(facts.text)
            return f"{where} met {_DECODING[facts.cls_name]}" + (f" ({detail})" if detail else "")
    if any(marker in outer.text.lower() for marker in _DAMAGED_FILE):
        return (
            f"a lake file read by {where} is damaged or incomplete ({plain(outer.text)}), "
            "perhaps written when the disk was full or a run was killed"
        )
    return _internal(outer, where)


def is_internal(sentence: str) -> bool:
    """True when `explain` found no user or machine cause (a bug to report)."""
    return sentence.startswith("internal error in ")


def describe_exception(exc: BaseException, where: str) -> str:
    """The sentence for a live exception raised while doing `where`."""
    return explain(facts_of_exception(exc), where)


def describe_error_info(info: SerializedError, where: str) -> str:
    """The sentence for a Dagster step's serialized error."""
    return explain(facts_of_error_info(info), where)
