"""Static keys: ``MCP_API_KEY`` may do everything (``key:full``), ``MCP_READ_API_KEY`` only read (``key:read``).
Compared in constant time (``hmac.compare_digest``); an unset or empty key is no key."""

from __future__ import annotations

import hmac
import logging

from pydantic import SecretStr

from mcp_service.auth.scopes import Caller

logger = logging.getLogger("mcp_service.auth")


def configured_key(value: SecretStr | None) -> bytes | None:
    """A key setting's bytes, or ``None`` when it is unset or empty (an empty key is no key)."""
    raw = value.get_secret_value() if value is not None else ""
    return raw.encode() if raw else None


class StaticKeys:
    """The full key and, only beside it, the read-only key."""

    def __init__(self, api_key: SecretStr | None, read_api_key: SecretStr | None = None) -> None:
        self.full = configured_key(api_key)
        self.read = configured_key(read_api_key) if self.full else None
        if read_api_key is not None and self.full is None:
            logger.warning("auth.disabled MCP_READ_API_KEY is set but MCP_API_KEY is not: that key is not used")

    @property
    def configured(self) -> bool:
        return self.full is not None

    def caller(self, token: str) -> Caller | None:
        """The caller a presented key makes, or ``None`` when it is neither key."""
        if self.full is None:
            return None
        presented = token.encode()
        if hmac.compare_digest(presented, self.full):
            return Caller("key:full", read=True, write=True)
        if self.read is not None and hmac.compare_digest(presented, self.read):
            return Caller("key:read", read=True, write=False)
        return None
