"""Where a lake is: its location (a path or a `file://` URI) as a local folder.

Kept apart from `storage` (which imports Polars) so that commands that only need the folder, such
as `ratings query "SELECT 1"`, start without importing Polars.
"""

from __future__ import annotations

import re
from pathlib import Path


def as_local_path(location: Path | str) -> Path:
    """Turn a lake location (a path or a `file://` URI) into a local `Path`.

    Object-storage URIs are refused here, the one place where a filesystem layer would go.
    """
    if isinstance(location, Path):
        return location
    text = str(location)
    if text.startswith("file://"):
        return Path(text[len("file://") :])
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", text):
        raise ValueError(f"only local lake folders are supported so far, not {text!r}")
    return Path(text)
