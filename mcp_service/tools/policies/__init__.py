"""The ``policy-kb-mcp`` tools (specs 000/001): ``tools`` (the handlers and ``register_tools``), ``work``
(what each does, one call into ``lib.policies``), ``outputs`` (what each returns)."""
