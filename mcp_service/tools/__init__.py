"""The MCP servers' tools, one package per server, each laid out alike:

    policies/     ``policy-kb-mcp`` (specs 000/001)      documents/    ``document-store-mcp`` (spec 003)
    kb/           ``kb-mcp`` (spec 002)                  governance/   ``governance-rag`` (spec 004)

    <server>/tools.py     ``SERVER_NAME``, ``INSTRUCTIONS`` and ``register_tools(server, stores)``: the typed handlers
    <server>/work.py      what each tool does: one call into ``lib`` over the server's stores, nothing about MCP
    <server>/outputs.py   what each tool returns on success (the output schemas ``tools/list`` publishes)

Shared: ``registration`` (descriptions dedented from the docstrings; the write tools read from the annotations)
and ``envelope`` (the spec's success and error JSON).
"""
