"""The ``document-store-mcp`` tools (spec 003): ``tools`` (the handlers and ``register_tools``), ``work``
(what each does, one call into ``lib.documents``), ``outputs`` (what each returns)."""
