"""One module per MCP server's tools: ``policies`` (``policy-kb-mcp``) and ``documents``
(``document-store-mcp``). A tool is a typed handler that makes one call into ``lib`` and returns the
spec's JSON through ``envelope``."""
