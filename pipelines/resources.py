"""Dagster resources: where the inbox and the lake are (DESIGN §6)."""

from __future__ import annotations

from pathlib import Path

import dagster as dg


class PipelinePaths(dg.ConfigurableResource):
    """The inbox to read and the lake to write; both default to the project's sample set."""

    inbox: str = "data_samples"
    lake: str = "lake"

    @property
    def inbox_path(self) -> Path:
        """The inbox as a Path."""
        return Path(self.inbox)

    @property
    def lake_path(self) -> Path:
        """The lake as a Path (created on first write)."""
        return Path(self.lake)
