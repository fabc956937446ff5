"""Club folders and the names of their lists: `clubs/<name>/` in the inbox publishes as
`club-<slug>-<rating list>`.

- `club_slug(folder_name)`: the folder's name made safe for a list name (`Şişli` -> `sisli`).
- `club_list_name(club_id, rating_list)`: e.g. `club-ankara-sk-standard`.
- `check_club_folders(names)`: refuses folders whose names fold to the same list name, or to
  none (`ClubFolderError`, one sentence naming them).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from rating_core.text import is_safe_name

_ASCII_FOLD = str.maketrans(
    {"ı": "i", "ß": "ss", "ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE"}
    | {"ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "þ": "th", "Þ": "Th"}
)
"""Letters that Unicode decomposition does not reduce to ASCII (the dotless ı of Turkish...)."""


class ClubFolderError(ValueError):
    """Club folders that cannot each have their own list name; the message says which and why."""


def club_slug(folder_name: str) -> str:
    """A club folder's name as it appears in list names: unchanged when already safe
    (`ankara-sk`, `ODTU_SK`), else ASCII-folded, lowercase, every run of other characters one `-`
    (`Ankara SK` -> `ankara-sk`, `Şişli` -> `sisli`); may be empty."""
    if is_safe_name(folder_name):  # already usable in a list name: existing club lists stay
        return folder_name
    decomposed = unicodedata.normalize("NFKD", folder_name.translate(_ASCII_FOLD))
    folded = decomposed.encode("ascii", "ignore").decode("ascii").lower()
    return re.sub(r"[^a-z0-9]+", "-", folded).strip("-")


def club_list_name(club_id: str, rating_list: str) -> str:
    """The published list of a club and rating list, e.g. `club-ankara-sk-standard`."""
    return f"club-{club_slug(club_id)}-{rating_list}"


def check_club_folders(folder_names: Iterable[str]) -> None:
    """Refuse club folders without a letter or digit to name a list, or two folders that would
    publish under one name (`Ankara SK` and `ankara-sk`): one sentence naming them."""
    by_slug: dict[str, list[str]] = {}
    for name in sorted(folder_names):
        slug = club_slug(name)
        if not slug:
            raise ClubFolderError(
                f"the club folder 'clubs/{name}' has no letter or digit that can name its "
                "lists: rename it"
            )
        by_slug.setdefault(slug, []).append(name)
    for slug, names in by_slug.items():
        if len(names) > 1:
            folders = " and ".join(f"'clubs/{n}'" for n in names)
            raise ClubFolderError(
                f"the club folders {folders} would both publish as 'club-{slug}-...': "
                "rename or merge them"
            )
