"""The ``governance-rag`` tools (spec 004): ``tools`` (the handlers and ``register_tools``), ``work`` (what each
does, one call into ``lib``), ``outputs`` (what each returns)."""
