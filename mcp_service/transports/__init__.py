"""How MCP messages reach a server: ``streamable_http`` (``/mcp``, the SDK's transport, stateless),
``sse_relay`` (legacy SSE across replicas) and ``bodies`` (request bodies read before the app)."""
