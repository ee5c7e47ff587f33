"""``benchmarks/profile_split.py``: each py-spy sample goes to the innermost frame a part names."""

from __future__ import annotations

from pathlib import Path

from benchmarks.profile_split import split

LOOP = "run (/root/.pyenv/versions/3.11.7/lib/python3.11/asyncio/base_events.py:600)"
SDK = "handle (/srv/app/.venv/lib/python3.11/site-packages/mcp/server/lowlevel/server.py:700)"
SEARCH = "exact_search (/srv/app/lib/retrieval/corpus_index.py:170)"
ENCODE = "encode (/srv/app/lib/stores/embeddings.py:120)"
ORT = "run (/srv/app/.venv/lib/python3.11/site-packages/onnxruntime/capi/session.py:200)"
DUMPS = "encode (/root/.pyenv/versions/3.11.7/lib/python3.11/json/encoder.py:200)"


def test_samples_go_to_the_innermost_part_and_each_goal(tmp_path: Path) -> None:
    profile = tmp_path / "prof.txt"
    head = 'process 7:"policy-kb serve";thread (0x7f)'
    profile.write_text(
        "\n".join(
            [
                f"{head};{LOOP};{SDK};{SEARCH} 6",  # search called by the SDK: search
                f"{head};{LOOP};{SDK};{SEARCH};{ENCODE};{ORT} 3",  # the encoder inside a search: embedding
                f"{head};{LOOP};{SDK};{DUMPS} 2",  # the SDK's JSON: the MCP/HTTP layer
                f"{head};{LOOP} 1",
            ]
        )
        + "\n"
    )
    parts, goals, total = split(profile)
    assert total == 12
    assert parts == {"search: retrieval": 6, "embedding": 3, "JSON": 2, "asyncio event loop": 1}
    assert goals == {"search": 6, "embedding": 3, "MCP/HTTP": 3}
