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
