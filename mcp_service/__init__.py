"""The service: four MCP servers over Streamable HTTP and SSE (governance also over stdio), bearer auth, health
and the REST API.

Where things are:

    __main__.py          ``python -m mcp_service`` / ``policy-kb serve``: which servers, which ports
    app.py               the Starlette app every MCP server is served in (routes, lifespan, auth)
    policy_kb.py         ``policy-kb-mcp`` (specs 000/001): policies in time, with the REST API
    document_store.py    ``document-store-mcp`` (spec 003): application documents
    kb.py                ``kb-mcp`` (spec 002): notes and files in collections, over the kb engine
    governance.py        ``governance-rag`` (spec 004): governance documents in force, with ``GET /query``
    tools/               one package per server's tools, laid out alike; their envelope
    transports/          ``/mcp`` (the SDK's Streamable HTTP), the SSE relay, request bodies
    rest/                the ``/api/v1`` REST API and the governance server's ``/query``
    auth/                keys, OAuth tokens, scopes, start-up refusal, the middleware; health.py: ``/health``
    search_lane.py       the worker threads searches run on (and the kb reads' admission); heap.py: the warm heap frozen
    kb_engine_client.py  the kb engine's HTTP API as the ``kb`` tools call it (``KB_ENGINE_URL``)
    kb_engine_local.py   the same calls answered in process, when the engine is this service
    views.py             JSON shapes that tools and REST share
"""
