"""``lib.retrieval`` is reached only through its contract: the names in ``lib.retrieval.__all__`` (issue 47
item 3). Every ``.py`` file of the product, the flows, the deployments, the benchmarks, the tests and CI's
scripts is read with ``ast``; an import of a ``lib.retrieval`` submodule, or of a name the contract does not
hold, from outside ``lib/retrieval`` is a failure naming the file and line.

One exemption, the engine's own checks of its parts (``ENGINE_OWN``): its unit tests (``tests/lib/retrieval/``)
test each part where it is written (a posting list, a code page, the scratch arrays), so a failure names the
module at fault; its kernel benchmarks time one internal kernel against another (the column product against
torch's, the int8 path against the float32 one) to set a threshold inside the engine. They are the engine's
own tests and measurements, not its callers; everything else goes through the door.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Iterator
from pathlib import Path

import lib.retrieval

ROOT = Path(__file__).resolve().parents[3]
SCANNED = ("lib", "mcp_service", "flows", "deployments", "benchmarks", "tests", ".ci")
ENGINE = Path("lib/retrieval")
ENGINE_OWN = (
    Path("tests/lib/retrieval"),
    Path("benchmarks/dense_floor.py"),
    Path("benchmarks/dense_small_path.py"),
)
PACKAGE = "lib.retrieval"
DOTTED = re.compile(r"lib\.retrieval(\.\w+)+")
"""A string that is a dotted path into the package (what ``monkeypatch.setattr`` or ``import_module`` takes)."""


def _module_of(path: Path) -> str:
    """The dotted module a file under ``ROOT`` is (``lib/policies/search.py`` -> ``lib.policies.search``)."""
    parts = path.with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module an ``ImportFrom`` names, relative imports resolved against ``module``."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def breaches(source: str, module: str, contract: Collection[str], *, is_package: bool = False) -> Iterator[str]:
    """Each way ``source`` (the text of ``module``) reaches past the contract, as ``line: what``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + "."):
                    yield f"{node.lineno}: import {alias.name}"
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(node, module, is_package)
            if target.startswith(PACKAGE + "."):
                yield f"{node.lineno}: from {target} import ..."
            elif target == PACKAGE:
                for alias in node.names:
                    if alias.name not in contract:
                        yield f"{node.lineno}: from {PACKAGE} import {alias.name} (not in the contract)"
        elif isinstance(node, ast.Attribute) and _dotted(node).count(".") == 2:
            package, _, name = _dotted(node).rpartition(".")
            if package == PACKAGE and name not in contract:
                yield f"{node.lineno}: {PACKAGE}.{name} (not in the contract)"
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and DOTTED.fullmatch(node.value)
            and node.value.split(".")[2] not in contract
        ):
            yield f"{node.lineno}: {node.value!r} (a path into the engine, as a string)"


def _dotted(node: ast.expr) -> str:
    """``a.b.c`` for an attribute chain on a plain name, else ``""``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def _callers() -> Iterator[Path]:
    """Every scanned file outside the engine and its own tests, relative to ``ROOT``."""
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if "node_modules" in relative.parts:  # the conformance suite's own packages, not ours
                continue
            if relative.is_relative_to(ENGINE) or any(relative.is_relative_to(own) for own in ENGINE_OWN):
                continue
            yield relative


def _imported_names(source: str) -> set[str]:
    """The names ``source`` imports from the package itself."""
    return {
        alias.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and node.module == PACKAGE and not node.level
        for alias in node.names
    }


def test_nothing_outside_the_engine_reaches_past_its_contract() -> None:
    assert all((ROOT / own).exists() for own in ENGINE_OWN), "an exemption names a file that is gone"
    assert all((ROOT / top).is_dir() for top in SCANNED)
    contract = set(lib.retrieval.__all__)
    found = [
        f"{path}:{breach}"
        for path in _callers()
        for breach in breaches(
            (ROOT / path).read_text(encoding="utf-8"), _module_of(path), contract, is_package=path.stem == "__init__"
        )
    ]
    assert not found, f"{len(found)} imports reach past lib.retrieval's contract:\n" + "\n".join(found)


def test_the_contract_holds_only_names_its_callers_use_and_each_exists() -> None:
    """A name no caller outside the engine imports is not part of the door: it goes, so the door stays small."""
    used: set[str] = set()
    for path in _callers():
        used |= _imported_names((ROOT / path).read_text(encoding="utf-8"))
    contract = lib.retrieval.__all__
    assert len(contract) == len(set(contract))
    assert all(hasattr(lib.retrieval, name) for name in contract)
    assert sorted(set(contract) - used) == []


def test_the_check_names_every_way_past_the_door() -> None:
    """The scan itself: each form of reaching an internal module is caught, the contract's own names are not."""
    source = "\n".join(
        [
            "import lib.retrieval",
            "import lib.retrieval.lexical",
            "from lib.retrieval import search, tokenize",
            "from lib.retrieval.corpus_index import CorpusIndex",
            "from lib import retrieval",
            "from ..retrieval.legs import legs",
            "from ..retrieval import search",
            "importlib.import_module('lib.retrieval.quantized')",
            "lib.retrieval.legs.SIDE_BY_SIDE_ROWS",
            "print(lib.retrieval.search)",
            'DOC = "See ``lib.retrieval.lexical`` for the scan."',
        ]
    )
    found = list(breaches(source, "lib.policies.search", {"search"}))
    assert found == [
        "2: import lib.retrieval.lexical",
        "3: from lib.retrieval import tokenize (not in the contract)",
        "4: from lib.retrieval.corpus_index import ...",
        "6: from lib.retrieval.legs import ...",
        "8: 'lib.retrieval.quantized' (a path into the engine, as a string)",
        "9: lib.retrieval.legs (not in the contract)",
    ]
