"""The documented examples, read from the pages that show them (docs/*.md, README.md).

A page marks a fenced block for the tests with an HTML comment on the line before it, which
MkDocs passes through unseen:

- `<!-- test: NAME -->`: a block a test runs by name (a query, the calculator forms);
- `<!-- file: PATH -->`: a file the examples' scenario writes (PATH relative to its folder);
- `<!-- output: STAGE -->`: a `text` block whose first line is `$ ratings ...` and whose other
  lines are that command's output at 80 columns; STAGE says when in the scenario it runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

_MARKED = re.compile(
    r"^<!-- (?P<kind>test|file|output): (?P<name>\S+) -->\n```[\w-]*\n(?P<body>.*?)^```$",
    re.M | re.S,
)


@dataclass(frozen=True)
class Marked:
    """One marked block: where it is, its kind and name, and its text."""

    page: str
    kind: str
    name: str
    body: str


def marked_blocks(pages: list[Path] | None = None) -> list[Marked]:
    """Every marked block of the docs pages and the README, in page order."""
    paths = pages if pages is not None else [*sorted(DOCS.glob("*.md")), ROOT / "README.md"]
    found = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        for match in _MARKED.finditer(text):
            found.append(
                Marked(path.name, match["kind"], match["name"], match["body"].rstrip("\n"))
            )
    return found


def doc_block(name: str, kind: str = "test") -> str:
    """The one block marked `<!-- kind: name -->` (its text, ending with a newline)."""
    blocks = [b for b in marked_blocks() if b.kind == kind and b.name == name]
    assert len(blocks) == 1, f"{len(blocks)} blocks marked '<!-- {kind}: {name} -->' in the docs"
    return blocks[0].body + "\n"


def command_lines(name: str) -> list[str]:
    """The command lines of the shell block `name`, without their `# ...` comments."""
    lines = []
    for line in doc_block(name).splitlines():
        command = re.sub(r"\s+#\s.*$", "", line).strip()
        if command:
            lines.append(command)
    return lines
