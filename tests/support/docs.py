"""The documented examples, read from the pages that show them (docs/*.md, README.md).

A page marks a fenced block for the tests with an HTML comment on the line before it, which
MkDocs passes through unseen:

- `<!-- test: NAME -->`: a block a test runs by name (a query, the calculator forms);
- `<!-- file: PATH -->`: a file the examples' scenario writes (PATH relative to its folder);
- `<!-- output: STAGE -->`: a `text` block whose first line is `$ ratings ...` and whose other
  lines are that command's output at 80 columns; STAGE says when in the scenario it runs.

After a change of output, `.venv/bin/python -m tests.support.docs --rewrite` runs the scenario
and writes each output block again from what the commands print (review the diff).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
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


RATINGS = str(Path(sys.executable).with_name("ratings"))
STAGES = ("late-added", "run", "published")
"""When an output block runs: after the first run with the late result in the inbox, the second
run itself, after it."""

_SOMETIMES = re.compile(
    r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ |preparing the (PGN scanner|rating kernels) )"
)
"""Lines a run adds only sometimes: progress lines of work that took 5 s or more on a loaded
machine, and the kernels' compilation on a machine's first run."""


def run_ratings(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`ratings ARGS` in `cwd` as a user runs it in an 80-column terminal's pipe: stdout and
    stderr together, as the docs show them."""
    return subprocess.run(
        [RATINGS, *args],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "80", "LINES": "50"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=900,
    )


def shown(text: str) -> list[str]:
    """The lines of an output as the docs hold them: no trailing spaces, no sometimes-lines."""
    lines = [line.rstrip() for line in text.rstrip("\n").splitlines()]
    return [line for line in lines if not _SOMETIMES.match(line)]


def command_of(block: Marked) -> list[str]:
    """The arguments of an output block's `$ ratings ...` first line."""
    first = block.body.splitlines()[0]
    assert first.startswith("$ ratings "), f"{block.page}: output block without '$ ratings'"
    return shlex.split(first.removeprefix("$ ratings "))


@dataclass
class Scenario:
    """The folder of the examples (inbox/ and lake/ in it) and what each command printed."""

    folder: Path
    printed: dict[str, subprocess.CompletedProcess[str]] = field(default_factory=dict)
    tour: list[tuple[str, subprocess.CompletedProcess[str]]] = field(default_factory=list)


REVISE_FIDE = '[late_results]\nfide = "revise"\n'
"""The scenario's `ratings.toml`: the documented late result revises FIDE's lists too."""


def play_scenario(folder: Path, samples: Path) -> Scenario:
    """The scenario of docs/commands.md in `folder`: the samples as `inbox/`, a first run, the
    README's tour on its lake, the marked files written, then every output block by stage."""
    shutil.copytree(samples, folder / "inbox")
    shutil.copytree(samples, folder / "data_samples")  # the tour's default inbox, as in the repo
    # the page's late result revises the published FIDE lists: FIDE's late results under
    # `revise` (RULES §3.4; FIDE's default, next_list, would rate it on the next list)
    (folder / "ratings.toml").write_text(REVISE_FIDE, encoding="utf-8")
    first = run_ratings(["run", "--inbox", "inbox"], folder)
    assert first.returncode == 0, first.stdout
    found = Scenario(folder)
    for line in command_lines("tour"):
        args = shlex.split(line)
        if args[:2] == ["ratings", "ui"]:
            continue  # a server: tests/pipelines/cli/test_ui.py starts it
        found.tour.append((line, run_ratings(args[1:], folder)))
    blocks = marked_blocks()
    for block in blocks:
        if block.kind == "file":
            (folder / block.name).write_text(block.body + "\n", encoding="utf-8")
    for stage in STAGES:
        for block in blocks:
            if block.kind == "output" and block.name == stage:
                found.printed[block.body] = run_ratings(command_of(block), folder)
    return found


def rewrite_outputs() -> None:
    """Run the scenario and write every output block again from what the commands print."""
    with tempfile.TemporaryDirectory() as folder:
        found = play_scenario(Path(folder), ROOT / "data_samples")
        for path in [*sorted(DOCS.glob("*.md")), ROOT / "README.md"]:
            text = path.read_text(encoding="utf-8")
            for body, proc in found.printed.items():
                first = body.splitlines()[0]
                new = "\n".join([first, *shown(proc.stdout)])
                text = text.replace(f"```text\n{body}\n```", f"```text\n{new}\n```")
            path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["--rewrite"]:
        sys.exit("usage: python -m tests.support.docs --rewrite")
    rewrite_outputs()
