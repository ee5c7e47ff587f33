"""The keys a local run serves with (decision 0045): those the environment sets are kept, the others made fresh
and shown once with how to call the server."""

from __future__ import annotations

import pytest

from deployments.cli.keys import KEY_NAMES, local_keys, print_keys


def test_keys_the_environment_sets_are_kept_and_the_others_made() -> None:
    made = local_keys({"MCP_API_KEY": "mine", "KB_MCP_API_KEY": ""})
    assert list(made) == ["KB_MCP_API_KEY"] and len(made["KB_MCP_API_KEY"]) >= 40
    assert local_keys({name: "set" for name in KEY_NAMES}) == {}
    assert local_keys({}) != local_keys({}), "a made key is random"


def test_made_keys_are_printed_with_how_to_call(capsys: pytest.CaptureFixture[str]) -> None:
    keys = local_keys({})
    print_keys(keys, url="http://127.0.0.1:3003")
    out = capsys.readouterr().out
    assert all(f"{name}={key}" in out for name, key in keys.items())
    assert f'curl -H "Authorization: Bearer {keys["MCP_API_KEY"]}" http://127.0.0.1:3003/api/v1/policies' in out
