"""`python -m pipelines.cli.signatures`: record the argument types every kernel is compiled for
in a run (`pipelines.cli.prepare.SIGNATURES_FILE`), from a run over the samples.

A developer's tool, run when a kernel's arguments change. Apart from `prepare` because it runs
the pipeline (`pipelines.cli.run`), which imports `prepare` for its warm-up.
"""

from __future__ import annotations

import io
import json
import sys
import tempfile
from pathlib import Path

from pipelines.cli.prepare import (
    GROUPS,
    SAMPLES,
    SIGNATURES_FILE,
    kernel_name,
    signature_text,
)


def record_signatures(path: Path = SIGNATURES_FILE) -> dict[str, list[str]]:
    """Run the pipeline over the samples (PGN included) in this process and write the argument
    types every kernel of `GROUPS` was called with to `path`."""
    from rich.console import Console

    from pipelines.cli.run import run_pipeline

    with tempfile.TemporaryDirectory(prefix="ratings-signatures-") as folder:
        run_pipeline(SAMPLES, Path(folder) / "lake", console=Console(file=io.StringIO()))
    recorded = {
        kernel_name(k): sorted(signature_text(sig) for sig in k.signatures)
        for group in GROUPS
        for k in group.kernels
    }
    path.write_text(json.dumps(recorded, indent=1) + "\n", encoding="utf-8")
    return recorded


def main() -> int:
    """Record the signatures and say how many."""
    recorded = record_signatures()
    print(f"{SIGNATURES_FILE.name}: {sum(map(len, recorded.values()))} signatures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
