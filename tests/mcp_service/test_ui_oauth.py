"""Signing in to the web page at the OAuth issuer (``mcp_service.ui.issuer``): the authorization code with PKCE
against the real Authlib server (``oauth_server``, which approves ``USER`` at once), in Debian's Chromium, then
each way a sign-in must fail. The issuer is named ``localhost`` and the service ``127.0.0.1``: two sites, as in
production, so the cookies' SameSite rules are the ones a person meets.

The service is a second app over ``nppf_service``'s stores (both NPPF revisions), with OAuth and the page's
client configured; its keys stay on."""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Iterator
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from playwright.sync_api import Browser
from pydantic import SecretStr

from mcp_service.policy_kb import create_app
from tests.conftest import free_port
from tests.mcp_service.conftest import FULL_KEY, Service, running
from tests.mcp_service.oauth_server import SECRET, UI_CLIENT, USER, Issuer, running_issuer
from tests.mcp_service.test_ui import DEC_2024, search


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with running_issuer(host="localhost") as started:
        yield started


@pytest.fixture(scope="module")
def ui_service(issuer: Issuer, nppf_service: Service) -> Iterator[Service]:
    port = free_port()
    base = nppf_service.settings
    oauth = base.oauth.model_copy(
        update={
            "issuer_url": issuer.url,
            "ui_client_id": UI_CLIENT,
            "ui_client_secret": SecretStr(SECRET),
            "jwks_min_refresh_seconds": 0,
        }
    )
    service = base.service.model_copy(update={"policy_kb_port": port, "host": "127.0.0.1"})
    settings = base.model_copy(update={"oauth": oauth, "service": service})
    issuer.redirect_uris.append(f"http://127.0.0.1:{port}/ui/auth/callback")
    with running(create_app(settings, stores=nppf_service.stores, warm=False), port=port) as url:
        yield Service(url, nppf_service.stores, settings)


def session_of(cookie: str) -> dict[str, object]:
    """What a signed session cookie holds (its first part is the base64 JSON)."""
    payload = cookie.split(".")[0]
    return dict(json.loads(base64.b64decode(payload + "=" * (-len(payload) % 4))))


def test_a_person_signs_in_at_the_issuer_lands_back_signed_in_and_searches(
    ui_service: Service, issuer: Issuer, browser: Browser
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{ui_service.url}/ui/policies")
        assert urlsplit(page.url).path == "/ui/signin"
        label = urlsplit(issuer.url).netloc
        with page.expect_request(lambda r: r.url.startswith(f"{issuer.url}/authorize?")) as asked:
            page.click(f"text=Sign in with {label}")
        sent = parse_qs(urlsplit(asked.value.url).query)
        assert sent["code_challenge_method"] == ["S256"] and len(sent["code_challenge"][0]) == 43
        assert sent["client_id"] == [UI_CLIENT] and sent["resource"] == [ui_service.url]
        page.wait_for_url(f"{ui_service.url}/ui/policies")
        assert "National Planning Policy Framework" in page.inner_text("main"), "back where it was asked for"
        assert page.inner_text(".who") == USER
        (cookie,) = [c for c in context.cookies() if c["name"] == "policy_kb_ui"]
        assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == (True, "Strict", "/ui")
        held = session_of(cookie["value"])
        assert set(held) == {"sub", "write", "until"} and held["sub"] == USER and held["write"] is True
        assert not [c for c in context.cookies() if c["name"] == "policy_kb_ui_oauth"], "the flow cookie is spent"
        assert set(search(page, "2025-06-01")) == {DEC_2024}
        page.goto(f"{ui_service.url}/ui/plans/new")
        assert page.locator("#plan-form").count() == 1, "a token with the write scope may add a plan"
        page.click("text=Sign out")
        page.goto(f"{ui_service.url}/ui/policies")
        assert urlsplit(page.url).path == "/ui/signin"
    finally:
        context.close()


def page_client(service: Service) -> httpx.Client:
    return httpx.Client(base_url=service.url, timeout=30)


def begin(browser: httpx.Client) -> str:
    """A sign-in started at the page by ``browser`` (which keeps the flow cookie) and approved at the issuer:
    the callback path and query the issuer sends it back to (not yet followed)."""
    started = browser.get("/ui/auth/start", params={"next": "/ui/search"})
    assert started.status_code == 303
    approved = httpx.get(started.headers["location"], timeout=30)
    found = re.search(r'id="back" href="([^"]+)"', approved.text)
    assert approved.status_code == 200 and found, approved.text
    back = urlsplit(html.unescape(found[1]))
    return f"{back.path}?{back.query}"


def with_state(callback: str, state: str) -> str:
    parts = urlsplit(callback)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()} | {"state": state}
    return f"{parts.path}?{urlencode(query)}"


def test_a_callback_whose_state_is_not_the_one_sent_opens_no_session(ui_service: Service) -> None:
    with page_client(ui_service) as browser:
        callback = begin(browser)
        refused = browser.get(with_state(callback, "forged-state"))
        assert refused.status_code == 401 and "not started here" in refused.text
        assert "policy_kb_ui" not in refused.cookies
        assert browser.get("/ui/search").status_code == 303, "still signed out"
    with page_client(ui_service) as browser, page_client(ui_service) as stranger:
        callback = begin(browser)
        refused = stranger.get(callback)  # the right state, but in a browser that did not start this sign-in
        assert refused.status_code == 401 and "policy_kb_ui" not in refused.cookies
    with page_client(ui_service) as browser:
        opened = browser.get(begin(browser))
        assert opened.status_code == 200 and "policy_kb_ui" in opened.cookies, "the same steps, unforged, sign in"
        assert browser.get("/ui/search").status_code == 200


def test_a_token_for_another_audience_opens_no_session(ui_service: Service, issuer: Issuer) -> None:
    issuer.force_audience = "http://elsewhere.example:3003"
    try:
        with page_client(ui_service) as browser:
            refused = browser.get(begin(browser))
            assert refused.status_code == 401 and "not valid here" in refused.text
            assert "policy_kb_ui" not in refused.cookies
            assert browser.get("/ui/search").status_code == 303
    finally:
        issuer.force_audience = None


def test_the_key_sign_in_keeps_working_beside_the_issuer(ui_service: Service) -> None:
    with page_client(ui_service) as browser:
        form = browser.get("/ui/signin")
        assert 'id="key"' in form.text and "Sign in with localhost" in form.text
        signed = browser.post("/ui/signin", data={"key": FULL_KEY, "next": "/ui/policies"})
        assert signed.status_code == 303 and browser.get("/ui/policies").status_code == 200
