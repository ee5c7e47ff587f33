"""The service: MCP servers over Streamable HTTP and SSE, bearer auth, health and the REST API.

Where things are:

    __main__.py          ``python -m mcp_service`` / ``policy-kb serve``: which servers, which ports
    app.py               the Starlette app every MCP server is served in (routes, lifespan, auth)
    policy_kb.py         the ``policy-kb-mcp`` server: its composition root (``create_app``)
    document_store.py    the ``document-store-mcp`` server: its composition root
    tools/               one module per server's tools (``policies``, ``documents``), their envelope
    transports/          ``/mcp`` (the SDK's Streamable HTTP), the SSE relay, request bodies
    rest/                the ``/api/v1`` REST API: routes, schemas, error mapping, upload, jobs
    auth.py, health.py   bearer-token middleware; ``/health`` and the deep check
    views.py             JSON shapes that tools and REST share
"""
