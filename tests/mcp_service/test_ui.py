"""The web page ``/ui`` (issue 26) driven by headless Chromium (Debian's ``chromium``, through Playwright) against
the real policy-kb service holding both NPPF revisions (``nppf_service``): one browser for the module, every
request it makes recorded. The highlight of a cited page is checked in the pixels of a screenshot."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import Browser, BrowserContext, Page

from lib.governance.ingest import ingest_governance_corpus_files
from lib.policies.audit import audit_store
from lib.stores.objects import policy_file_key, sha256_bytes
from tests.flows.policy_pdfs import policy_pdf_bytes
from tests.mcp_service.conftest import FULL_KEY, READ_KEY, Service
from tests.mcp_service.governance_fixtures import GOVERNANCE_FIXTURES

DEC_2024, DRAFT = "rev_NPPF_2024_12", "rev_NPPF_2099_01_DRAFT"
QUESTION = "when may development be refused on highways grounds"
FOCUSABLE = "a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]:not([tabindex='-1'])"


@pytest.fixture(scope="module")
def requests_made() -> list[str]:
    """Every URL any page of the module's browser asked for."""
    return []


def new_context(browser: Browser, requests_made: list[str]) -> BrowserContext:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.on("request", lambda request: requests_made.append(request.url))
    return context


def sign_in(page: Page, url: str, key: str) -> None:
    page.fill("#key", key)
    page.click("button[type=submit]")
    page.wait_for_load_state()


@pytest.fixture(scope="module")
def page(nppf_service: Service, browser: Browser, requests_made: list[str]) -> Iterator[Page]:
    """A page signed in with the full key, shared by the module's views."""
    context = new_context(browser, requests_made)
    opened = context.new_page()
    opened.goto(f"{nppf_service.url}/ui/search")
    sign_in(opened, nppf_service.url, FULL_KEY)
    yield opened
    context.close()


def yellow_pixels(png: bytes) -> int:
    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    return int(((pixels[..., 0] > 200) & (pixels[..., 1] > 150) & (pixels[..., 2] < 140)).sum())


def search(page: Page, day: str) -> list[str]:
    """Ask the question as of ``day`` through the search form (htmx swaps the results in); the revisions cited.
    From another view, the search page is opened first; the results shown before are cleared, so the wait
    below is for the new ones."""
    if urlsplit(page.url).path != "/ui/search":
        page.goto(page.url.split("/ui/")[0] + "/ui/search")
    page.evaluate("() => { document.querySelector('#results').innerHTML = ''; }")
    page.fill("#q", QUESTION)
    page.fill("#date", day)
    with page.expect_response(lambda r: "/ui/search?" in r.url):
        page.click("form.search button[type=submit]")
    page.wait_for_selector(f"#results h2 time[datetime='{day}']")
    return page.eval_on_selector_all(".citation", "items => items.map(i => i.dataset.revision)")


def test_sign_in_refuses_a_wrong_key_and_accepts_the_right_one(
    nppf_service: Service, browser: Browser, requests_made: list[str]
) -> None:
    context = new_context(browser, requests_made)
    try:
        page = context.new_page()
        page.goto(f"{nppf_service.url}/ui/policies")
        assert urlsplit(page.url).path == "/ui/signin", "not signed in: the form first"
        with page.expect_response(lambda r: r.url.endswith("/ui/signin") and r.request.method == "POST") as refused:
            page.fill("#key", "not-the-key")
            page.click("button[type=submit]")
        assert refused.value.status == 401
        assert "not valid" in page.inner_text("[role=alert]")
        assert not [c for c in context.cookies() if c["name"] == "policy_kb_ui"]
        sign_in(page, nppf_service.url, READ_KEY)
        assert urlsplit(page.url).path == "/ui/policies", "back where the sign-in was asked for"
        assert "National Planning Policy Framework" in page.inner_text("main")
        (cookie,) = [c for c in context.cookies() if c["name"] == "policy_kb_ui"]
        assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == (True, "Strict", "/ui")
        page.click("text=Sign out")
        page.goto(f"{nppf_service.url}/ui/policies")
        assert urlsplit(page.url).path == "/ui/signin"
    finally:
        context.close()
    with httpx.Client(base_url=nppf_service.url) as plain:
        assert plain.get("/ui/search").status_code == 303, "no cookie, no page"
    with httpx.Client(base_url=nppf_service.url, cookies={"policy_kb_ui": "eyJrZXkiOiAieCJ9.forged.sig"}) as forged:
        assert forged.get("/ui/search").status_code == 303, "an unsigned cookie is no session"
    with httpx.Client(base_url=nppf_service.url) as plain:
        assert plain.get("/api/v1/policies").status_code == 401, "the API still wants its bearer token"


def test_search_as_of_two_dates_cites_the_edition_in_force_each_day(page: Page) -> None:
    assert set(search(page, "2025-06-01")) == {DEC_2024}
    assert "December 2024" in page.inner_text(".citation .label")
    assert "date=2025-06-01" in page.url, "the search is in the address, to share or go back to"
    assert set(search(page, "2099-06-01")) == {DRAFT}
    assert "December 2025 consultation draft" in page.inner_text(".citation .label")


def test_a_citation_opens_its_page_with_the_chunk_highlighted_beside_the_section(
    page: Page, nppf_service: Service
) -> None:
    search(page, "2025-06-01")
    cited = page.inner_text(".citation .ref")
    page.click(".citation a.cite")
    page.wait_for_function(
        "() => { const i = document.querySelector('#page-image'); return i && i.complete && i.naturalWidth > 0; }"
    )
    assert cited in page.inner_text("#section-head")
    marked = yellow_pixels(page.locator("#page-image").screenshot())
    cited_url = page.url
    page.goto(cited_url.split("?")[0])  # the same page, nothing cited
    page.wait_for_function("() => document.querySelector('#page-image').naturalWidth > 0")
    plain = yellow_pixels(page.locator("#page-image").screenshot())
    assert marked > 500 and plain < 50, (marked, plain)
    page.goto(cited_url)
    assert page.locator("a[rel=next]").count() == 1
    href = page.get_attribute("text=Download the original (PDF)", "href")
    download = page.request.get(f"{nppf_service.url}{href}")
    assert download.headers["content-type"] == "application/pdf" and download.body().startswith(b"%PDF")


def test_the_timeline_shows_both_revisions_and_compare_shows_a_diff(page: Page, nppf_service: Service) -> None:
    page.goto(f"{nppf_service.url}/ui/policies/NPPF/timeline")
    bars = page.eval_on_selector_all("#timeline g.bar", "gs => gs.map(g => g.dataset.revision)")
    assert sorted(bars) == sorted([DEC_2024, DRAFT])
    assert page.locator("#timeline line.asked").count() == len(bars), "the date asked marked across each bar"
    page.select_option("#from", DEC_2024)
    page.select_option("#to", DRAFT)
    page.fill("#section_ref", "Para 1")
    page.click("form.search button[type=submit]")
    page.wait_for_selector("#comparison #diff")
    assert page.locator("#diff del").count() > 0 and page.locator("#diff ins").count() > 0
    assert "says something else" in page.inner_text("#movement"), "Para 1 of each edition says other things"


def test_governance_shows_the_documents_in_force_on_a_date_with_their_chains(page: Page, nppf_service: Service) -> None:
    report = ingest_governance_corpus_files(nppf_service.stores.governance, GOVERNANCE_FIXTURES)
    assert not report.failed, report

    def in_force(day: str) -> dict[str, str]:
        page.goto(f"{nppf_service.url}/ui/governance?date={day}")
        return dict(
            page.eval_on_selector_all(
                "tr[data-doc]", "rows => rows.map(r => [r.dataset.doc, r.querySelector('.chain').innerText])"
            )
        )

    before, after = in_force("2018-01-01"), in_force("2020-01-01")
    assert before["PEP-0513"] == "PEP-0513 → PEP-0600" and "PEP-0600" not in before
    assert after["PEP-0600"] == "PEP-0513 → PEP-0571 → PEP-0599 → PEP-0600" and "PEP-0513" not in after
    assert "PEP-0722" not in after and "PEP-0003" not in after, "rejected and withdrawn: never in force"


def test_a_phone_reads_every_view_in_one_column_without_scrolling_sideways(page: Page, nppf_service: Service) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        search(page, "2025-06-01")
        href = page.get_attribute(".citation a.cite", "href")
        views = (
            "/ui/policies/NPPF/timeline",
            "/ui/policies/NPPF/contents",
            "/ui/ingestion",
            "/ui/verify",
            "/ui/plans/new",
        )
        for path in (None, href, *views):
            if path is not None:
                page.goto(nppf_service.url + path)
            wide = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert wide <= 0, f"{path or 'search'} is {wide}px wider than the phone"
        box = page.locator("html").bounding_box()
        assert box is not None and box["width"] <= 390
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})


WALKED = (
    "/ui/search?q=highways&date=2025-06-01",
    "/ui/policies/NPPF/timeline",
    "/ui/governance",
    "/ui/ingestion",
    "/ui/verify?quote=planning+permission+should+be+granted",
    "/ui/plans/new",
)


@pytest.mark.parametrize("path", WALKED)
def test_a_keyboard_walk_reaches_every_control_with_visible_focus(page: Page, nppf_service: Service, path: str) -> None:
    page.goto(nppf_service.url + path)
    total = page.evaluate(
        f"""() => {{ const all = [...document.querySelectorAll("{FOCUSABLE}")].filter(e => e.getClientRects().length);
            all.forEach((e, i) => e.dataset.k = String(i)); return all.length; }}"""
    )
    assert total > 5
    wanted, reached, unmarked = {str(i) for i in range(total)}, set[str](), list[str]()
    for _ in range(2 * total + 10):  # a date input takes a Tab per part (day, month, year)
        if len(reached & wanted) == total:
            break
        page.keyboard.press("Tab")
        key, outline = page.evaluate(
            "() => { const e = document.activeElement; const s = getComputedStyle(e);"
            " return [e.dataset.k || e.tagName, s.outlineStyle !== 'none' && s.outlineWidth !== '0px']; }"
        )
        reached.add(key)
        if not outline:
            unmarked.append(key)
    missed = sorted(wanted - reached)
    where = [page.evaluate(f"() => document.querySelector('[data-k=\"{k}\"]').outerHTML") for k in missed]
    assert not missed, f"not reached by Tab: {where}"
    assert not unmarked, f"focused without a visible outline: {unmarked}"


def test_every_view_loads_only_from_its_own_origin(page: Page, nppf_service: Service, requests_made: list[str]) -> None:
    for path in ("/ui/policies", "/ui/policies/NPPF/contents", "/ui/governance?date=2025-06-01", "/ui/ingestion"):
        response = page.goto(nppf_service.url + path)
        assert response is not None and response.status == 200, path
    counts = re.search(
        r"Revisions: (\d+) processing · (\d+) active · (\d+) superseded · (\d+) failed", page.inner_text("#progress")
    )
    assert counts is not None and int(counts[2]) + int(counts[3]) >= 2, "both NPPF revisions are counted"
    page.goto(nppf_service.url + "/ui/policies/NPPF/contents")
    page.click("ul.sections a >> nth=5")
    page.wait_for_function("() => document.querySelector('#page-image').naturalWidth > 0")
    origin = nppf_service.url
    assert any(u.endswith("/ui/static/htmx.min.js") for u in requests_made)
    assert any("/ui/image/" in u for u in requests_made)
    foreign = [u for u in requests_made if not u.startswith(origin + "/")]
    assert not foreign, foreign


def test_ingestion_shows_the_last_audit_stored_not_one_run_for_the_page(page: Page, nppf_service: Service) -> None:
    """The audit runs elsewhere (the flow, the CLI: both call ``audit_store``); the page shows what it stored."""
    stores = nppf_service.stores.policies
    stray = policy_pdf_bytes("stray")
    stray_key = policy_file_key("NPPF", "rev_NPPF_2098_01", sha256_bytes(stray))
    stores.objects.put_bytes(stray_key, stray)
    try:
        found = audit_store(stores)
        assert [f.key for f in found.findings] == [stray_key]
    finally:
        stores.objects.delete(stray_key)
    page.goto(f"{nppf_service.url}/ui/ingestion")
    verdict = page.inner_text("#audit-verdict")
    assert f"Last audit {found.checked_at:%Y-%m-%d %H:%M:%S} UTC" in verdict and "1 finding(s)." in verdict
    (row,) = page.eval_on_selector_all("#audit tr.finding", "rows => rows.map(r => r.innerText)")
    assert "unreferenced_file" in row and stray_key in row and "delete the file" in row
    page.reload()
    assert stray_key in page.inner_text("#audit"), "the file is gone, but no audit ran since: the record stands"

    audit_store(stores)
    page.reload()
    assert "Consistent: no findings." in page.inner_text("#audit-verdict")
    assert page.locator("#audit tr.finding").count() == 0
