"""get_page_image on the real NPPF: the cited page rendered from the stored original with the cited text
highlighted where PyMuPDF finds it on the page (checked in the pixels, not only in the answer), kept in the
object store for every replica, through ``lib``, a real MCP client and REST."""

from __future__ import annotations

import base64
import io

import numpy as np
import pymupdf
import pytest
from mcp_types import ImageContent
from PIL import Image
from PIL.PngImagePlugin import PngInfo

from lib.errors import InvalidArgumentError
from lib.policies.ingest import ingest_revision
from lib.policies.lifecycle import register_revision, remove_revision
from lib.policies.models import PolicyCreate, RevisionCreate
from lib.policies.page_images import BOXES_KEY, DEFAULT_DPI, RENDER_PREFIX, page_image
from lib.policies.search import search_policy
from lib.policies.sections import get_policy_section
from lib.policies.stores import PolicyStores
from tests.flows.policy_pdfs import policy_pdf_bytes
from tests.mcp_service.conftest import FULL_KEY, Service, mcp_session

IN_FORCE = "2025-06-01"


@pytest.fixture(scope="module")
def policies(nppf_service: Service) -> PolicyStores:
    return nppf_service.stores.policies


def yellow(png: bytes) -> np.ndarray:
    """The mask of highlighter-yellow pixels (strong red and green, little blue)."""
    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    return (pixels[..., 0] > 200) & (pixels[..., 1] > 150) & (pixels[..., 2] < 140)


def boxes_of(policies: PolicyStores, page_number: int, text: str) -> np.ndarray:
    """Where PyMuPDF's own search finds ``text``'s words on the page of the stored original, three at a time,
    as a pixel mask at the default dpi."""
    revision = policies.registry.get_revision("NPPF", "rev_NPPF_2024_12")
    with pymupdf.open(stream=policies.objects.get_bytes(revision.file_path), filetype="pdf") as doc:
        page = doc[page_number - 1]
        zoom = DEFAULT_DPI / 72
        mask = np.zeros((round(page.rect.height * zoom), round(page.rect.width * zoom)), dtype=bool)
        words = text.split()
        for i in range(len(words) - 2):  # three words at a time: PyMuPDF finds a phrase within a line
            for rect in page.search_for(" ".join(words[i : i + 3])):
                x0, y0, x1, y1 = (int(v * zoom) for v in rect)
                mask[max(0, y0 - 3) : y1 + 3, max(0, x0 - 3) : x1 + 3] = True
    return mask


def test_the_cited_sentence_is_highlighted_where_it_is_printed(policies: PolicyStores) -> None:
    section = get_policy_section(policies, "NPPF", "Para 116", effective_date=IN_FORCE)
    page_number = section.page_numbers[0]
    sentence = section.text.split(" ", 1)[1].split(". ")[0]  # the first sentence, without "116."
    assert sentence.startswith("Development should only be prevented") and len(sentence.split()) > 20
    marked = page_image(policies, "NPPF", page_number, effective_date=IN_FORCE, highlight=sentence)
    plain = page_image(policies, "NPPF", page_number, effective_date=IN_FORCE)
    assert marked.render.highlighted > 0 and plain.render.highlighted == 0
    assert (marked.revision_id, marked.page_number, marked.render.page_count) == (
        "rev_NPPF_2024_12",
        page_number,
        plain.render.page_count,
    )
    lit, unlit = yellow(marked.render.png), yellow(plain.render.png)
    assert lit.shape == unlit.shape == (marked.render.height, marked.render.width)
    added = lit & ~unlit
    assert added.sum() > 2000, "a highlighted sentence is thousands of yellow pixels at 150 dpi"
    where = np.zeros_like(added)
    boxes = boxes_of(policies, page_number, sentence)[: added.shape[0], : added.shape[1]]
    where[: boxes.shape[0], : boxes.shape[1]] = boxes
    assert (added & where).sum() / added.sum() > 0.95, "the yellow is where the sentence is printed"


def test_a_search_hit_is_highlighted_on_its_page_and_the_render_is_kept_for_every_replica(
    policies: PolicyStores,
) -> None:
    hit = search_policy(policies, "refused on highways grounds", effective_date=IN_FORCE, n_results=1).results[0]
    first = page_image(policies, "NPPF", hit.page_number, effective_date=IN_FORCE, chunk_id=hit.chunk_id)
    assert first.render.highlighted > 0 and yellow(first.render.png).sum() > 1000
    revision = policies.registry.get_revision("NPPF", "rev_NPPF_2024_12")
    prefix = f"{RENDER_PREFIX}/{revision.file_sha256}/{hit.page_number}-{DEFAULT_DPI}-"
    assert any(key.startswith(prefix) for key in policies.objects.list(f"{RENDER_PREFIX}/")), "kept in the store"
    again = page_image(policies, "NPPF", hit.page_number, effective_date=IN_FORCE, chunk_id=hit.chunk_id)
    assert again.render == first.render  # read back: the same bytes, and what it marked
    assert again.printed_page == first.printed_page == again.render.printed_page == str(hit.page_number)  # NPPF
    # A render kept before renders carried their printed page: the page is looked up instead.
    keys = [k for k in policies.objects.list(f"{RENDER_PREFIX}/") if k.startswith(prefix)]
    (key,) = [k for k in keys if policies.objects.get_bytes(k) == first.render.png]
    older = PngInfo()
    older.add_text(BOXES_KEY, str(first.render.highlighted))
    out = io.BytesIO()
    Image.open(io.BytesIO(first.render.png)).save(out, format="PNG", pnginfo=older)
    policies.objects.put_bytes(key, out.getvalue(), "image/png")
    old = page_image(policies, "NPPF", hit.page_number, effective_date=IN_FORCE, chunk_id=hit.chunk_id)
    assert old.render.printed_known is False and old.printed_page == first.printed_page


def test_bad_pages_and_foreign_chunks_are_refused(policies: PolicyStores) -> None:
    pages = page_image(policies, "NPPF", 1, effective_date=IN_FORCE).render.page_count
    with pytest.raises(InvalidArgumentError, match="page must be between"):
        page_image(policies, "NPPF", pages + 1, effective_date=IN_FORCE)
    draft_chunk = policies.vectors.ids({"revision_ref": "NPPF:rev_NPPF_2099_01_DRAFT"})[0]
    with pytest.raises(InvalidArgumentError, match="is not a chunk of NPPF rev_NPPF_2024_12"):
        page_image(policies, "NPPF", 1, effective_date=IN_FORCE, chunk_id=draft_chunk)
    with pytest.raises(InvalidArgumentError, match="dpi"):
        page_image(policies, "NPPF", 1, effective_date=IN_FORCE, dpi=600)


@pytest.mark.anyio
async def test_get_page_image_through_a_real_mcp_client_is_an_image_that_decodes(nppf_service: Service) -> None:
    section = get_policy_section(nppf_service.stores.policies, "NPPF", "Para 116", effective_date=IN_FORCE)
    args = {
        "source": "NPPF",
        "page_number": section.page_numbers[0],
        "effective_date": IN_FORCE,
        "highlight": "Development should only be prevented or refused on highways grounds",
    }
    async with mcp_session(nppf_service.url, key=FULL_KEY) as session:
        result = await session.call_tool("get_page_image", args)
        refused = await session.call_tool("get_page_image", {**args, "page_number": 9999})
    assert not result.is_error and result.structured_content is not None
    assert result.structured_content["highlighted"] > 0
    assert result.structured_content["printed_page"] == "33"  # the NPPF prints its PDF page numbers from page 3
    images = [block for block in result.content if isinstance(block, ImageContent)]
    assert len(images) == 1 and images[0].mime_type == "image/png"
    png = base64.b64decode(images[0].data)
    decoded = Image.open(io.BytesIO(png))
    assert decoded.size == (result.structured_content["width"], result.structured_content["height"])
    assert yellow(png).sum() > 1000
    assert refused.is_error and refused.structured_content is not None
    assert refused.structured_content["error_type"] == "invalid_argument"
    with nppf_service.rest() as api:
        path = result.structured_content["url"].removeprefix("/api/v1")
        over_rest = api.get(path, params={"highlight": args["highlight"]})
    assert over_rest.status_code == 200 and over_rest.headers["content-type"] == "image/png"
    assert over_rest.content == png and over_rest.headers["x-printed-page"] == "33"


def test_a_deleted_revisions_renders_go_with_its_original(fresh_service: Service) -> None:
    policies = fresh_service.stores.policies
    policies.registry.create_policy(PolicyCreate(source="LTN_1_20", title="LTN 1/20", category="national_guidance"))
    for rid, start, edition in [("rev_a", "2020-01-01", "first"), ("rev_b", "2024-01-01", "second")]:
        data = RevisionCreate(revision_id=rid, version_label=rid, effective_from=start)
        register_revision(policies, "LTN_1_20", data, policy_pdf_bytes(edition=edition))
        ingest_revision(policies, "LTN_1_20", rid)
    first = policies.registry.get_revision("LTN_1_20", "rev_a")
    page_image(policies, "LTN_1_20", 1, revision_id="rev_a", highlight="first edition")
    page_image(policies, "LTN_1_20", 1, revision_id="rev_b")
    renders = lambda sha: list(policies.objects.list(f"{RENDER_PREFIX}/{sha}/"))  # noqa: E731
    assert len(renders(first.file_sha256)) == 1
    remove_revision(policies, "LTN_1_20", "rev_a")
    assert renders(first.file_sha256) == []
    assert len(renders(policies.registry.get_revision("LTN_1_20", "rev_b").file_sha256)) == 1
