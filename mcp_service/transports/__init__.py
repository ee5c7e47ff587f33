"""How MCP messages reach a server: ``streamable_http`` (``/mcp``, the SDK's transport, and the optional
single-exchange lane), ``sse_relay`` (legacy SSE across replicas) and ``bodies`` (request bodies read
before the app)."""
