"""The reference tables in docs/ are what the code gives now: each server's tools (as the servers register them),
the error types and the settings. A stale table fails here; ``make docs`` rewrites them."""

from __future__ import annotations

from pathlib import Path

import pytest

from deployments.docs.generated import BLOCKS, Generated, regenerate
from deployments.docs.markers import read_block, replace_block
from tests.mcp_service.tool_names import SERVER_TOOLS


@pytest.mark.parametrize("block", BLOCKS, ids=lambda block: f"{block.document}:{block.name}")
def test_the_committed_table_is_what_the_code_gives(block: Generated) -> None:
    assert block.committed() == block.render(), f"{block.document}:{block.name} is stale: run make docs"


def test_the_tool_table_lists_every_tool_of_every_server_once() -> None:
    table = next(block for block in BLOCKS if block.name == "tools").render()
    for server, (reads, writes) in SERVER_TOOLS.items():
        for name in reads | writes:
            rows = [row for row in table.splitlines() if row.startswith(f"| `{server}` | `{name}(")]
            assert len(rows) == 1, (server, name)
            assert rows[0].split(" | ")[2] == ("write" if name in writes else "read"), (server, name)


def test_make_docs_rewrites_a_stale_table_and_leaves_the_rest(tmp_path: Path) -> None:
    for block in BLOCKS:
        path = tmp_path / block.document
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text((Path(__file__).resolve().parents[1] / block.document).read_text())
        path.write_text(replace_block(path.read_text(), block.name, "| stale |\n"))
    before = (tmp_path / "docs/agents.md").read_text()
    assert sorted(regenerate(tmp_path)) == sorted(f"{b.document}:{b.name}" for b in BLOCKS)
    after = (tmp_path / "docs/agents.md").read_text()
    assert after.split("<!-- BEGIN GENERATED: tools -->")[0] == before.split("<!-- BEGIN GENERATED: tools -->")[0]
    assert all(read_block((tmp_path / b.document).read_text(), b.name) == b.render() for b in BLOCKS)
    assert regenerate(tmp_path) == []


def test_a_missing_block_is_refused() -> None:
    with pytest.raises(ValueError, match="expected one generated block 'tools', found 0"):
        read_block("# no blocks here\n", "tools")
