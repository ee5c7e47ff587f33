"""The layering the package promises, read from the source: each domain imports only the shared layers, never
another domain nor the composition root (``lib.composition``) above them, and ``lib`` never imports the
service, the flows or the CLI that call it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[2] / "lib"
DOMAINS = ("policies", "documents", "notes", "governance")
CALLERS = ("mcp_service", "flows", "deployments", "benchmarks")


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, wherever the import sits (also under ``TYPE_CHECKING`` or in a function)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(f"{package}.")


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_domain_imports_no_other_domain_nor_the_composition_root(domain: str) -> None:
    modules = sorted((LIB / domain).rglob("*.py"))
    assert modules, f"lib/{domain} has no modules"
    forbidden = ["lib.composition", *(f"lib.{other}" for other in DOMAINS if other != domain)]
    found = {
        f"{path.relative_to(LIB.parent)} imports {name}"
        for path in modules
        for name in imported_modules(path)
        if any(within(name, package) for package in forbidden)
    }
    assert not found, sorted(found)


def test_lib_never_imports_its_callers() -> None:
    found = {
        f"{path.relative_to(LIB.parent)} imports {name}"
        for path in sorted(LIB.rglob("*.py"))
        for name in imported_modules(path)
        if any(within(name, package) for package in CALLERS)
    }
    assert not found, sorted(found)


def test_the_composition_root_is_not_imported_inside_lib() -> None:
    found = {
        f"{path.relative_to(LIB.parent)} imports {name}"
        for path in sorted(LIB.rglob("*.py"))
        if path != LIB / "composition.py"
        for name in imported_modules(path)
        if within(name, "lib.composition")
    }
    assert not found, sorted(found)


SDK_PACKAGES = ("mcp", "mcp_types")
OUR_CODE = ("lib", "mcp_service", "flows", "deployments", "benchmarks", "tests", ".ci")


def private(module: str) -> bool:
    """Whether a dotted name reaches into a private part: a component that starts with one underscore."""
    return any(part.startswith("_") and not part.startswith("__") for part in module.split("."))


def test_no_module_imports_a_private_name_of_the_mcp_sdk() -> None:
    """Issue 47: the SDK's private modules and names change without notice between releases, so our code, its
    tests and benchmarks use its public API only (``tests/mcp_http.py`` stands in for its private client
    factory)."""
    root = LIB.parent
    paths = [
        path
        for top in OUR_CODE
        for path in sorted((root / top).rglob("*.py"))
        if "node_modules" not in path.parts  # the conformance suite's Node install (.ci/conformance) is not ours
    ]
    assert len(paths) > 300, "the walk found too few modules to be looking in the right place"
    found = {
        f"{path.relative_to(root)} imports {name}"
        for path in paths
        for name in imported_modules(path)
        if any(within(name, package) for package in SDK_PACKAGES) and private(name)
    }
    assert not found, sorted(found)


def test_the_private_name_rule_sees_a_private_import() -> None:
    tree = "from mcp.shared._httpx_utils import create_mcp_http_client\nfrom mcp.server import _hidden\n"
    names: set[str] = set()
    for node in ast.walk(ast.parse(tree)):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    assert all(private(name) for name in names)
    assert not private("mcp.server.streamable_http_manager.StreamableHTTPSessionManager")
    assert not private("mcp.__main__")
