"""Which generated block lives in which document, and what writes it: the one list ``make docs`` and the
staleness test both read."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from deployments.docs.error_table import error_table
from deployments.docs.links import ROOT
from deployments.docs.markers import read_block, replace_block
from deployments.docs.settings_table import settings_table
from deployments.docs.tool_table import tool_table


@dataclass(frozen=True)
class Generated:
    """Block ``name`` of ``document`` (relative to the repository), written by ``render``."""

    document: str
    name: str
    render: Callable[[], str]

    def committed(self, root: Path = ROOT) -> str:
        """The block as the file holds it now."""
        return read_block((root / self.document).read_text(), self.name)


BLOCKS = (
    Generated("docs/agents.md", "tools", tool_table),
    Generated("docs/agents.md", "errors", error_table),
    Generated("docs/operations.md", "settings", settings_table),
)


def regenerate(root: Path = ROOT) -> list[str]:
    """Rewrite every block from the code; the names of the blocks that changed (``document:name``)."""
    changed = []
    for block in BLOCKS:
        path = root / block.document
        text = path.read_text()
        body = block.render()
        if read_block(text, block.name) != body:
            path.write_text(replace_block(text, block.name, body))
            changed.append(f"{block.document}:{block.name}")
    return changed
