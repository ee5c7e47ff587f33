"""The ``kb-mcp`` tools (spec 002): ``tools`` (the handlers and ``register_tools``), ``work`` (what each does:
one engine call with the collection convention, or the upload staging; ``KbStores``), ``outputs`` (what each
returns)."""
