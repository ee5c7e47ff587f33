"""What each ``policy-kb-mcp`` tool does: one call into ``lib``, its result shaped into the tool's output
schema (``outputs``). The handlers in ``tools`` run these on a worker thread through the envelope; nothing
here knows about MCP."""

from __future__ import annotations

from datetime import date
from typing import Any

from lib.dates import parse_date
from lib.paths import read_allowed_file
from lib.policies import search as lib_search
from lib.policies.compare import compare_section
from lib.policies.ingest import Progress, ingest_revision
from lib.policies.lifecycle import RegistrationAction, ensure_registered, remove_revision_chunks
from lib.policies.models import IngestOutcome, RevisionCreate
from lib.policies.page_images import page_image
from lib.policies.quotes import verify_quote
from lib.policies.registry import check_revision_id, check_source
from lib.policies.reindex import reindex_revision
from lib.policies.sections import find_citing_sections, get_policy_section, list_policy_sections
from lib.policies.stores import PolicyStores
from lib.stores.objects import sha256_bytes
from lib.text.filetypes import FileKind, detect_file_type
from mcp_service.tools.envelope import WithImage
from mcp_service.tools.policies.outputs import (
    BatchQueryResult,
    BatchSearchOutput,
    CitingOutput,
    CompareOutput,
    DocumentsOutput,
    IngestOutput,
    PageImageOutput,
    QuoteOutput,
    RemoveOutput,
    RevisionsOutput,
    SearchOutput,
    SectionOutput,
    SectionsOutput,
    SnapshotOutput,
)
from mcp_service.views import policy_info, revision_info, snapshot


def _ingested(source: str, revision_id: str, outcome: IngestOutcome, action: str) -> IngestOutput:
    return IngestOutput(
        source=source,
        revision_id=revision_id,
        chunks_created=outcome.chunks_created,
        chunks_removed=outcome.chunks_removed,
        page_count=outcome.page_count,
        extraction_method=outcome.extraction_method,
        action=action,
    )


def ingest_file(
    stores: PolicyStores, source: str, revision_id: str, file_path: str, reindex: bool, progress: Progress | None = None
) -> IngestOutput:
    """Ingest the PDF at ``file_path`` as the registered revision (spec 000 FR-005), through the same
    ``lib`` functions as the ingestion and reindex flows: ``ensure_registered`` (idempotent by content
    hash), then ``ingest_revision`` or ``reindex_revision``.

    With ``reindex`` and a file other than the stored one, the revision is rebuilt from the file given,
    which replaces the stored original (``reindex_revision(..., replacement=)``). The same file already
    ingested is ``unchanged`` unless ``reindex``, or unless its chunks are gone (``remove_policy_revision``
    then ``ingest_policy_revision``, the spec's reindex job): then it is ingested again. ``progress(phase,
    percent)`` is told how the ingestion goes (``lib.policies.ingest.Progress``)."""
    revision = stores.registry.get_revision(check_source(source), check_revision_id(revision_id))
    content = read_allowed_file(stores.settings, file_path)
    detect_file_type(content, {FileKind.PDF}, file_name=file_path)
    if reindex and revision.resolvable and revision.file_sha256 != sha256_bytes(content):
        rebuilt = reindex_revision(stores, source, revision_id, replacement=content, progress=progress)
        return _ingested(source, revision_id, rebuilt, "reindexed")
    registration = ensure_registered(
        stores,
        source,
        RevisionCreate(
            revision_id=revision_id,
            version_label=revision.version_label,
            effective_from=revision.effective_from,
            effective_to=revision.effective_to,
            notes=revision.notes,
        ),
        content,
    )
    current = registration.revision
    if registration.action != RegistrationAction.UNCHANGED:
        return _ingested(
            source, revision_id, ingest_revision(stores, source, revision_id, progress=progress), "ingested"
        )
    if reindex:
        return _ingested(
            source, revision_id, reindex_revision(stores, source, revision_id, progress=progress), "reindexed"
        )
    if stores.vectors.count_revision(source, revision_id) != current.chunk_count:
        return _ingested(
            source, revision_id, reindex_revision(stores, source, revision_id, progress=progress), "ingested"
        )
    return IngestOutput(
        source=source,
        revision_id=revision_id,
        chunks_created=current.chunk_count,
        chunks_removed=0,
        page_count=current.page_count,
        extraction_method=current.extraction_method,
        action="unchanged",
    )


def remove_chunks(stores: PolicyStores, source: str, revision_id: str) -> RemoveOutput:
    """Remove a revision's chunks and nothing else (spec 000 FR-006, ``remove_revision_chunks``)."""
    chunks = remove_revision_chunks(
        stores.vectors, check_source(source), check_revision_id(revision_id), registry=stores.registry
    )
    return RemoveOutput(source=source, revision_id=revision_id, chunks_removed=chunks)


def documents(stores: PolicyStores) -> DocumentsOutput:
    policies = stores.registry.list_policies()
    today = stores.resolver.resolve_many([p.source for p in policies], date.today())
    infos = [policy_info(p, today.get(p.source)) for p in policies]
    return DocumentsOutput(policy_count=len(infos), policies=infos)


def revisions(stores: PolicyStores, source: str) -> RevisionsOutput:
    stores.registry.get_policy(check_source(source))
    revisions = [revision_info(r) for r in stores.registry.list_revisions(source)]
    return RevisionsOutput(source=source, revision_count=len(revisions), revisions=revisions)


def snapshot_on(stores: PolicyStores, effective_date: str) -> SnapshotOutput:
    day = parse_date(effective_date, field="effective_date")
    titles = {p.source: p.title for p in stores.registry.list_policies()}
    return SnapshotOutput(**snapshot(day, stores.resolver.resolve_snapshot(day), titles).model_dump())


def search(stores: PolicyStores, **kwargs: Any) -> SearchOutput:
    result = lib_search.search_policy(stores, **kwargs)
    return SearchOutput(
        query=result.query,
        effective_date=result.effective_date,
        results_count=len(result.results),
        results=result.results,
    )


def search_batch(stores: PolicyStores, queries: list[str], **kwargs: Any) -> BatchSearchOutput:
    results = lib_search.search_policy_batch(stores, queries, **kwargs)
    return BatchSearchOutput(
        effective_date=results[0].effective_date if results else None,
        query_count=len(results),
        results=[BatchQueryResult(query=r.query, results_count=len(r.results), results=r.results) for r in results],
    )


def page(stores: PolicyStores, source: str, page_number: int, **kwargs: Any) -> WithImage:
    image = page_image(stores, source, page_number, **kwargs)
    render = image.render
    url = f"/api/v1/policies/{image.source}/revisions/{image.revision_id}/pages/{image.page_number}.png"
    out = PageImageOutput(
        source=image.source,
        revision_id=image.revision_id,
        version_label=image.version_label,
        page_number=image.page_number,
        printed_page=image.printed_page,
        page_count=render.page_count,
        width=render.width,
        height=render.height,
        highlighted=render.highlighted,
        url=url,
    )
    return WithImage(out, render.png)


def quote(stores: PolicyStores, text: str, **kwargs: Any) -> QuoteOutput:
    return QuoteOutput(**verify_quote(stores, text, **kwargs).model_dump())


def section(stores: PolicyStores, **kwargs: Any) -> SectionOutput:
    return SectionOutput(**get_policy_section(stores, **kwargs).model_dump())


def sections(stores: PolicyStores, **kwargs: Any) -> SectionsOutput:
    return SectionsOutput(**list_policy_sections(stores, **kwargs).model_dump())


def citing(stores: PolicyStores, **kwargs: Any) -> CitingOutput:
    return CitingOutput(**find_citing_sections(stores, **kwargs).model_dump())


def compare(stores: PolicyStores, **kwargs: Any) -> CompareOutput:
    return CompareOutput(**compare_section(stores, **kwargs).model_dump())
