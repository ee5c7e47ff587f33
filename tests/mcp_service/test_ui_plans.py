"""Adding a plan from the page (issue 44) in headless Chromium: the form takes a PDF and its details, runs
the ingestion the REST upload runs (here the embedded default: no Prefect server, so a background run of the
same flow), follows its progress, and ends with the plan found by a search. The read-only key may not add
one; a mistake comes back in words with what was typed still there. Screenshots and axe as ``ui_checks``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from tests.flows.policy_pdfs import policy_pdf_bytes
from tests.mcp_service.conftest import FULL_KEY, READ_KEY, Service
from tests.mcp_service.test_ui import sign_in
from tests.mcp_service.ui_checks import checked

SOURCE, TITLE = "TESTSHIRE_LP", "Testshire Local Plan"
READ_TIMEOUT_MS = 240_000
"""How long the first ingestion of a fresh service may take: it starts Prefect's temporary local API."""


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    opened = browser.new_context(viewport={"width": 1280, "height": 900})
    yield opened
    opened.close()


def signed_in(context: BrowserContext, url: str, key: str) -> Page:
    page = context.new_page()
    page.goto(f"{url}/ui/plans/new")
    sign_in(page, url, key)
    return page


def fill(page: Page, pdf: Path, **values: str) -> None:
    page.set_input_files("#file", str(pdf))
    for name, value in values.items():
        if name == "category":
            page.select_option("#category", value)
        else:
            page.fill(f"#{name}", value)


def test_a_plan_added_on_the_page_is_read_and_then_found_by_a_search(
    fresh_service: Service, context: BrowserContext, tmp_path: Path
) -> None:
    pdf = tmp_path / "testshire.pdf"
    pdf.write_bytes(policy_pdf_bytes("Testshire adopted 2021"))
    page = signed_in(context, fresh_service.url, FULL_KEY)
    checked(page, "add-plan-form")

    fill(
        page,
        pdf,
        source=SOURCE,
        title=TITLE,
        version_label="Adopted March 2021",
        effective_from="2021-03-01",
        effective_to="2020-01-01",
    )
    with page.expect_response(lambda r: r.url.endswith("/ui/plans/new") and r.request.method == "POST") as sent:
        page.click("#plan-form button[type=submit]")
    assert sent.value.status == 400
    assert "the last day in force is on or after the first" in page.inner_text("#problems")
    names = ("source", "title", "version_label", "effective_from", "effective_to")
    kept = {n: page.input_value(f"#{n}") for n in names}
    assert kept == {
        "source": SOURCE,
        "title": TITLE,
        "version_label": "Adopted March 2021",
        "effective_from": "2021-03-01",
        "effective_to": "2020-01-01",
    }
    assert not fresh_service.stores.policies.registry.policy_exists(SOURCE), "nothing registered from a bad form"
    checked(page, "add-plan-bad-dates")

    polled: list[str] = []
    page.on("request", lambda r: polled.append(r.url) if r.headers.get("hx-request") else None)
    fill(page, pdf, effective_to="")
    page.click("#plan-form button[type=submit]")
    page.wait_for_url(f"**/ui/plans/{SOURCE}/*")
    assert page.locator("#plan-status").count() == 1
    checked(page, "add-plan-progress")
    page.wait_for_selector("#plan-ready", timeout=READ_TIMEOUT_MS)
    assert page.get_attribute("#plan-status", "data-status") == "active"
    assert any(u.endswith("/status") for u in polled), "the progress came from htmx polling its fragment"
    revision = fresh_service.stores.policies.registry.list_revisions(SOURCE)[0]
    assert revision.version_label == "Adopted March 2021" and revision.chunk_count > 0
    checked(page, "add-plan-ready")

    page.click("#search-plan")
    page.fill("#q", "how wide should cycle lanes be")
    with page.expect_response(lambda r: "/ui/search?" in r.url):
        page.click("form.search button[type=submit]")
    page.wait_for_selector("#results .citation")
    cited = page.eval_on_selector_all(".citation .src", "es => es.map(e => e.innerText)")
    assert cited and set(cited) == {TITLE}
    assert "Testshire adopted 2021" in page.inner_text("#results"), "the plan's own words"
    checked(page, "add-plan-searched")


def test_the_read_only_key_cannot_add_a_plan_and_is_told_why(
    nppf_service: Service, context: BrowserContext, tmp_path: Path
) -> None:
    page = signed_in(context, nppf_service.url, READ_KEY)
    assert page.locator("#plan-form").count() == 0
    assert "read-only key" in page.inner_text("#read-only")
    checked(page, "add-plan-read-only")
    pdf = policy_pdf_bytes("refused")
    refused = page.request.post(
        f"{nppf_service.url}/ui/plans/new",
        multipart={
            "file": {"name": "p.pdf", "mimeType": "application/pdf", "buffer": pdf},
            "source": "REFUSED_LP",
            "title": "Refused",
            "category": "local_plan",
            "version_label": "v1",
            "effective_from": "2021-01-01",
        },
    )
    assert refused.status == 403 and "full key" in refused.text()
    assert not nppf_service.stores.policies.registry.policy_exists("REFUSED_LP")


def test_a_file_that_is_not_a_pdf_is_refused_in_words_and_registers_nothing(
    nppf_service: Service, context: BrowserContext, tmp_path: Path
) -> None:
    page = signed_in(context, nppf_service.url, FULL_KEY)
    notes = tmp_path / "notes.pdf"
    notes.write_text("Minutes of the planning committee, not a PDF at all.", encoding="utf-8")
    fill(page, notes, source="NOT_A_PDF_LP", title="Not a PDF", version_label="v1", effective_from="2021-01-01")
    with page.expect_response(lambda r: r.url.endswith("/ui/plans/new") and r.request.method == "POST") as sent:
        page.click("#plan-form button[type=submit]")
    assert sent.value.status >= 400
    assert "PDF" in page.inner_text("#problem-file")
    assert page.input_value("#title") == "Not a PDF" and page.input_value("#effective_from") == "2021-01-01"
    assert not nppf_service.stores.policies.registry.policy_exists("NOT_A_PDF_LP"), "no empty plan left behind"
    checked(page, "add-plan-not-a-pdf")
