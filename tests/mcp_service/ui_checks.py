"""What the web page's browser tests check on every state they reach: a screenshot saved where a person can
look at it (``tests/output/ui/``, printed), and axe-core's accessibility rules run in the page (installed by
``make axe`` under ``.tools/axe``), none of their serious or critical violations allowed."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / ".tools" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
SHOTS = ROOT / "tests" / "output" / "ui"
BLOCKING = ("serious", "critical")


def screenshot(page: Page, name: str) -> Path:
    """The whole page as ``tests/output/ui/{name}.png``; its path is printed for the test's output."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    return path


def axe_violations(page: Page) -> list[str]:
    """axe-core's serious and critical violations in the page as it stands, one line each. The script is
    evaluated through the browser's debugging protocol, so the page's Content-Security-Policy (no script from
    elsewhere) stays as served."""
    if not AXE.exists():
        pytest.fail("axe-core is not installed: run `make axe` (needs npm)", pytrace=False)
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))
    found = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations.map(v => "
        "({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 3)}))"
    )
    return [f"{v['impact']} {v['id']}: {v['help']} at {v['nodes']}" for v in found if v["impact"] in BLOCKING]


def checked(page: Page, name: str) -> None:
    """Screenshot the state as ``name`` and assert axe finds nothing serious or critical in it."""
    screenshot(page, name)
    violations = axe_violations(page)
    assert not violations, f"{name}: {violations}"
