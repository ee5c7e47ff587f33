"""Who is calling: the token's subject or the key's name, set by the service's auth middleware for the
request being served, so the logs of what it does (the query log, audit lines) can name it. Never a token."""

from __future__ import annotations

from contextvars import ContextVar

current_caller: ContextVar[str | None] = ContextVar("current_caller", default=None)
"""``sub:<subject>``, ``key:full``, ``key:read``, ``ip:<address>`` (no auth) or ``None`` outside a request."""
