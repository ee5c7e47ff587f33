"""Governance documents (spec 004): ADRs, PRDs, PEPs and other decision records, searched by agents.

``lib.governance.api`` re-exports what the MCP tools, REST routes, flows and CLI call (this package's
``__init__`` cannot: ``lib.kb`` imports the stores, and the operations import ``lib.kb``).
"""
