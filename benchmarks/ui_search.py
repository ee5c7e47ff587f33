"""The web page's search, as a person sees it (issue 26): time from pressing Search to the first citation in the
page, in headless Chromium (Debian's ``chromium``, through Playwright, as ``tests/mcp_service/test_ui.py``).

    .venv/bin/python benchmarks/ui_search.py [--data-dir .bench/ui] [--rounds 2]

The policy-kb app (``create_app``, warm-up included) is served by uvicorn on a free port in this process, over a
store under ``--data-dir`` seeded with both NPPF revisions (kept: a rerun only measures) with its embedded Redis.
The browser signs in with the key, then asks every question of ``benchmarks/nppf_questions.json`` through the form
(htmx swaps the results in), alternately as of a day the December 2024 edition is in force and one the draft is:
the results are emptied first, then the clock runs in the page itself (``performance.now()``) from the click
to the animation frame after the first ``.citation`` enters the DOM (a ``MutationObserver``), so no driver
round trip is counted. Printed: p50/p95/max of that, of the
server's answer alone (the request's ``responseEnd - requestStart`` in the browser's resource timing), and of
a full page load of a search URL (no htmx: from ``goto`` to the first citation, as Playwright sees it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import threading
import time
import warnings
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
warnings.filterwarnings("ignore", category=FutureWarning)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import uvicorn  # noqa: E402
from playwright.sync_api import Page, sync_playwright  # noqa: E402
from pydantic import SecretStr  # noqa: E402

from benchmarks.harness import free_port, percentiles  # noqa: E402
from lib.composition import open_stores  # noqa: E402
from lib.config import load_settings  # noqa: E402
from lib.policies.seeding import seed_policies  # noqa: E402
from lib.stores.redis_server import stop_embedded_redis  # noqa: E402
from mcp_service.policy_kb import create_app  # noqa: E402

SEED = ROOT / "deployments" / "seed" / "seed.yaml"
QUESTIONS = ROOT / "benchmarks" / "nppf_questions.json"
DAYS = ("2025-06-01", "2099-06-01")
KEY = "bench-ui-key-" + "k" * 24


def serve(app: object) -> tuple[str, uvicorn.Server, threading.Thread]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))  # type: ignore[arg-type]
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server, thread


CLICK_TO_FIRST_CITATION = """() => new Promise(resolve => {
    const results = document.querySelector('#results');
    const started = performance.now();
    const seen = new MutationObserver(() => {
        if (!results.querySelector('.citation')) return;
        seen.disconnect();
        requestAnimationFrame(() => resolve(performance.now() - started));
    });
    seen.observe(results, {childList: true, subtree: true});
    document.querySelector('form.search button[type=submit]').click();
})"""
"""In the page: from the click to the frame after the first citation enters the DOM (no driver round trip)."""


def ask(page: Page, question: str, day: str) -> tuple[float, float]:
    """(ms from the click to the first citation shown, ms of the server's answer as the browser timed it)."""
    page.evaluate("() => { document.querySelector('#results').innerHTML = ''; performance.clearResourceTimings(); }")
    page.fill("#q", question)
    page.fill("#date", day)
    shown = float(page.evaluate(CLICK_TO_FIRST_CITATION))
    server = page.evaluate(
        "() => { const r = performance.getEntriesByType('resource').filter(e => e.name.includes('/ui/search?'));"
        " return r.length ? r[r.length - 1].responseEnd - r[r.length - 1].requestStart : -1; }"
    )
    return shown, float(server)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".bench" / "ui")
    parser.add_argument("--rounds", type=int, default=2, help="times every question is asked (per day)")
    args = parser.parse_args()
    settings = load_settings(data_dir=args.data_dir, redis_url=None, mcp_api_key=SecretStr(KEY))
    stores = open_stores(settings)
    try:
        seed_policies(stores.policies, SEED)
        url, server, thread = serve(create_app(settings, stores=stores))
        questions = [q["question"] for q in json.loads(QUESTIONS.read_text())]
        chromium = shutil.which("chromium")
        assert chromium, "apt-get install chromium"
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"{url}/ui/search")
            page.fill("#key", KEY)
            page.click("button[type=submit]")
            page.wait_for_selector("#q")
            first = ask(page, questions[0], DAYS[0])
            shown, answered = [], []
            for _ in range(args.rounds):
                for i, question in enumerate(questions):
                    ms, server_ms = ask(page, question, DAYS[i % 2])
                    shown.append(ms)
                    answered.append(server_ms)
            loads = []
            for i, question in enumerate(questions[:20]):
                started = time.perf_counter()
                page.goto(f"{url}/ui/search?{urlencode({'q': question, 'date': DAYS[i % 2]})}", wait_until="commit")
                page.wait_for_selector("#results .citation", state="attached")
                loads.append((time.perf_counter() - started) * 1000)
            browser.close()
        server.should_exit = True
        thread.join(timeout=15)  # before the embedded Redis stops under it
        print(
            f"/ui search in headless Chromium, {len(questions)} NPPF questions x {args.rounds} rounds, "
            f"as of {' and '.join(DAYS)}; 10 citations each"
        )
        print(f"  first question after start: {first[0]:.1f} ms to the first citation")
        for name, samples in (
            ("click -> first citation", shown),
            ("server answer (resource timing)", answered),
            ("page load -> first citation", loads),
        ):
            p50, p95 = percentiles(samples, (50, 95))
            print(f"  {name:<34} p50 {p50:7.1f} ms  p95 {p95:7.1f} ms  max {max(samples):7.1f} ms  (n={len(samples)})")
    finally:
        stop_embedded_redis(settings.paths.redis_dir)


if __name__ == "__main__":
    main()
