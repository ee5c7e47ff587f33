"""One module per MCP server's tools: ``policies`` (``policy-kb-mcp``; what each tool does is in
``policy_work``, what it returns in ``policy_outputs``) and ``documents`` (``document-store-mcp``). A tool
is a typed handler that makes one call into ``lib`` and returns the spec's JSON through ``envelope``."""
