"""The service's side of observability: per-operation metrics as MCP server middleware (``operations``) and the
``/metrics`` route (``endpoint``). What is measured inside ``lib`` is ``lib.observability``."""
