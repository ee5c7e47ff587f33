"""The composition root opens a domain's stores on first use, over clients every domain shares."""

from __future__ import annotations

import uuid

from chromadb.api import ClientAPI

from lib.composition import open_stores
from lib.config import Settings


def collection_names(chroma: ClientAPI) -> set[str]:
    return {collection.name for collection in chroma.list_collections()}


def test_a_process_opens_only_the_domains_it_uses_over_one_set_of_clients(settings: Settings) -> None:
    settings = settings.replace(
        kb_collection=f"kb_docs_{uuid.uuid4().hex[:12]}", governance_collection=f"gov_{uuid.uuid4().hex[:12]}"
    )
    stores = open_stores(settings)
    names = (
        settings.chroma.policy_collection,
        settings.chroma.document_collection,
        settings.chroma.kb_collection,
        settings.chroma.governance_collection,
    )
    assert not set(names) & collection_names(stores.chroma)

    governance = stores.governance
    assert set(names) & collection_names(stores.chroma) == {settings.chroma.governance_collection}
    assert stores.governance is governance

    notes, policies, documents = stores.notes, stores.policies, stores.documents
    assert set(names) <= collection_names(stores.chroma)
    assert notes.redis is stores.redis and policies.registry.client is stores.redis
    assert {id(s.embedder) for s in (governance, notes, policies, documents)} == {id(stores.embedder)}
    assert {id(s.objects) for s in (notes, policies, documents)} == {id(stores.objects)}
    assert {id(s.settings) for s in (governance, notes, policies, documents)} == {id(settings)}
