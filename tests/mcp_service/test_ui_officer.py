"""The officer's page (issue 44) in headless Chromium (Debian's ``chromium``, Playwright) against the real
service holding both NPPF revisions (``nppf_service``): copying a citation, checking a quote, each revision's
standing on the date asked, a date before any revision, the timeline on a 375 px phone, a comparison that
leads with where a section went, mistakes answered beside the form. Every state is screenshotted into
``tests/output/ui/`` and checked with axe-core (``ui_checks``). Adding a plan is ``test_ui_plans``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date

import pytest
from playwright.sync_api import Browser, Page

from lib.policies.quotes import verify_quote
from lib.policies.sections import get_policy_section
from tests.mcp_service.conftest import FULL_KEY, Service
from tests.mcp_service.test_ui import DEC_2024, DRAFT, search, sign_in
from tests.mcp_service.ui_checks import checked

TITLE = "National Planning Policy Framework"


@pytest.fixture(scope="module")
def page(nppf_service: Service, browser: Browser) -> Iterator[Page]:
    """Signed in with the full key, allowed to read and write the clipboard."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=nppf_service.url)
    opened = context.new_page()
    opened.goto(f"{nppf_service.url}/ui/search")
    sign_in(opened, nppf_service.url, FULL_KEY)
    yield opened
    context.close()


def clipboard(page: Page) -> str:
    return str(page.evaluate("() => navigator.clipboard.readText()"))


def test_copy_citation_puts_the_citation_of_the_hit_and_of_its_section_on_the_clipboard(page: Page) -> None:
    assert set(search(page, "2025-06-01")) == {DEC_2024}
    first = page.locator(".citation").first
    ref = first.locator(".ref").inner_text()
    wanted = first.locator("button.copy").get_attribute("data-citation")
    assert wanted is not None and wanted.startswith(f"{TITLE} (December 2024), {ref}, ")
    assert re.search(r", (p\. \S+|PDF page \d+)", wanted), wanted
    first.locator("button.copy").click()
    first.locator(".copied:has-text('Copied')").wait_for()
    assert clipboard(page) == wanted
    checked(page, "copy-citation-search")
    first.locator("a.cite").click()
    page.wait_for_selector("#section-head")
    section_button = page.locator(".section-text button.copy")
    cited = section_button.get_attribute("data-citation")
    assert cited is not None and cited.startswith(f"{TITLE} (December 2024), {ref}")
    section_button.click()
    page.locator(".section-text .copied:has-text('Copied')").wait_for()
    assert clipboard(page) == cited
    checked(page, "copy-citation-section")


def verify_in_page(page: Page, url: str, quote: str, day: str) -> str:
    """Check ``quote`` as of ``day`` through the box (htmx swaps the verdict in); the classification shown."""
    page.goto(f"{url}/ui/verify")
    page.fill("#quote", quote)
    page.fill("#date", day)
    with page.expect_response(lambda r: "/ui/verify?" in r.url):
        page.click("#verify-form button[type=submit]")
    page.wait_for_selector("#verdict [data-verdict]")
    return page.inner_text("#verdict-class")


def test_the_verify_box_shows_the_classification_and_the_word_difference(page: Page, nppf_service: Service) -> None:
    stores = nppf_service.stores.policies
    text = get_policy_section(stores, "NPPF", "Para 116", revision_id=DEC_2024).text
    sentence = " ".join(text.split()[:30])
    assert verify_in_page(page, nppf_service.url, sentence, "2025-06-01") == "exact"
    assert page.inner_text("#verdict h2").startswith("Exact")
    cite = page.locator("#verdict button.copy").get_attribute("data-citation") or ""
    assert cite.startswith(f"{TITLE} (December 2024), Para 116")
    checked(page, "verify-exact")

    words = sentence.split()
    changed = next(i for i, w in enumerate(words) if w.isalpha() and len(w) > 5)
    altered = " ".join([*words[:changed], "never", *words[changed:]])
    expected = verify_quote(stores, altered, effective_date="2025-06-01")
    shown = verify_in_page(page, nppf_service.url, altered, "2025-06-01")
    assert shown == expected.verdict == "altered", "a negation added changes the meaning"
    assert "never" in page.inner_text("#word-diff"), "the inserted word, verbatim, in the difference"
    assert "never" in page.inner_text("#meaning-changes")
    assert "% alike" not in page.inner_text("#verdict"), "no similarity for a quote that says something else"
    checked(page, "verify-altered")

    draft = get_policy_section(stores, "NPPF", "Policy TR6", revision_id=DRAFT).text
    elsewhere = " ".join(draft.split()[2:30])
    shown = verify_in_page(page, nppf_service.url, elsewhere, "2025-06-01")
    assert shown == verify_quote(stores, elsewhere, effective_date="2025-06-01").verdict == "not_in_force"
    assert "December 2025 consultation draft" in page.inner_text("#verdict")
    checked(page, "verify-not-in-force")


def test_each_revision_is_described_as_of_the_date_asked_never_superseded_when_in_force(
    page: Page, nppf_service: Service
) -> None:
    search(page, "2025-06-01")
    said = page.locator(".citation .standing").first.inner_text()
    assert "in force on 1 June 2025" in said and "superseded" not in said.lower()
    page.click(".citation a.cite")
    assert "in force on 1 June 2025" in page.inner_text(".standing"), "the cited page keeps the date asked"
    page.goto(f"{nppf_service.url}/ui/policies/NPPF/timeline?date=2025-06-01")
    script = "rows => rows.map(r => [r.dataset.revision, r.querySelector('.revision-standing').innerText])"
    rows = dict(page.eval_on_selector_all(".revision-row", script))
    assert rows[DEC_2024].startswith("In force on 1 June 2025 (since 12 December 2024); to be replaced by the")
    assert rows[DRAFT].startswith("Not yet in force on 1 June 2025: takes effect on 1 January 2099")
    assert "superseded" not in page.inner_text("main").lower()
    checked(page, "timeline-as-of-2025-06-01")


def test_a_date_before_any_revision_says_nothing_was_in_force_and_when_the_first_began(
    page: Page, nppf_service: Service
) -> None:
    revisions = nppf_service.stores.policies.registry.list_revisions("NPPF")
    first = min(revisions, key=lambda r: r.effective_from)
    search(page, "2001-03-04")
    said = page.inner_text("#nothing-in-force")
    began = f"{first.effective_from.day} {first.effective_from:%B %Y}"
    assert (
        said == f"Nothing in force on 4 March 2001; the first revision ({first.version_label}) took effect on {began}."
    )
    assert page.locator("#no-match").count() == 0
    checked(page, "nothing-in-force-search")
    page.goto(f"{nppf_service.url}/ui/policies/NPPF/timeline?date=2001-03-04")
    assert page.inner_text("#nothing-in-force") == said


def test_the_timeline_reads_at_375_px_with_plain_labels_and_no_sideways_scroll(
    page: Page, nppf_service: Service
) -> None:
    page.set_viewport_size({"width": 375, "height": 812})
    try:
        page.goto(f"{nppf_service.url}/ui/policies/NPPF/timeline")
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 375, f"the timeline is {width}px wide on a 375px phone"
        labels = page.inner_text("#timeline")
        assert "December 2024" in labels and "rev_" not in labels
        assert not re.search(r"\b(active|superseded|processing|failed)\b", labels), labels
        sizes = page.eval_on_selector_all(
            "#timeline .revision-name, #timeline .tick-label",
            "es => es.map(e => parseFloat(getComputedStyle(e).fontSize))",
        )
        assert sizes and min(sizes) >= 12, f"text too small to read: {sizes}"
        boxes = page.eval_on_selector_all("#timeline .bar rect", "rs => rs.map(r => r.getBoundingClientRect().right)")
        assert boxes and max(boxes) <= 375
        checked(page, "timeline-375px")
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})


def test_compare_leads_with_where_the_section_went_then_its_word_changes(page: Page, nppf_service: Service) -> None:
    page.goto(f"{nppf_service.url}/ui/policies/NPPF/timeline")
    page.select_option("#from", DEC_2024)
    page.select_option("#to", DRAFT)
    page.fill("#section_ref", "Para 116")
    page.click("form.search button[type=submit]")
    page.wait_for_selector("#comparison #movement")
    movement = page.inner_text("#movement")
    kind = page.get_attribute("#movement", "class") or ""
    assert movement.startswith("Para 116 of the December 2024 "), movement
    assert re.search(r"move-(renumbered|moved|split)", kind), (kind, movement)
    assert "Policy TR6" in movement, "the draft says Para 116 in point 3 of Policy TR6"
    order = page.evaluate(
        "() => { const m = document.querySelector('#movement'), d = document.querySelector('#diff');"
        " return d && (m.compareDocumentPosition(d) & Node.DOCUMENT_POSITION_FOLLOWING) > 0; }"
    )
    assert order, "where it went first, then the word-level changes"
    assert page.locator("#diff del").count() + page.locator("#diff ins").count() > 0
    checked(page, "compare-para-116")


def test_a_bad_date_is_answered_in_plain_words_with_the_form_kept(page: Page, nppf_service: Service) -> None:
    response = page.goto(f"{nppf_service.url}/ui/search?q=highways+safety&date=2025-02-30&mode=lexical")
    assert response is not None and response.status == 400
    said = page.inner_text("#problems")
    assert "“2025-02-30” is not a date on the calendar" in said and "YYYY-MM-DD" in said
    assert page.input_value("#q") == "highways safety" and page.input_value("#date") == "2025-02-30"
    assert page.input_value("#mode") == "lexical"
    assert page.get_attribute("#date", "aria-describedby") == "problem-date"
    checked(page, "bad-date-search")
    response = page.goto(f"{nppf_service.url}/ui/verify?quote=planning+permission+should+be+granted&date=31/12/2024")
    assert response is not None and response.status == 400
    assert "“31/12/2024” is not a date" in page.inner_text("#problems")
    assert page.input_value("#quote") == "planning permission should be granted"
    assert page.input_value("#date") == "31/12/2024"
    assert date.today().isoformat() in page.inner_text("#problems"), "an example of the form wanted"


@pytest.mark.parametrize(
    "path",
    ["/ui/policies", "/ui/policies/NPPF/contents", "/ui/governance?date=2025-06-01", "/ui/ingestion", "/ui/verify"],
)
def test_the_other_views_pass_axe_too(page: Page, nppf_service: Service, path: str) -> None:
    response = page.goto(nppf_service.url + path)
    assert response is not None and response.status == 200
    checked(page, "view-" + path.strip("/").split("?")[0].replace("/", "-"))
