"""Whether a server may start without credentials: only with ``ALLOW_UNAUTHENTICATED`` and on loopback
(decision 0045, a deviation from spec 000 FR-010's open default)."""

from __future__ import annotations

import ipaddress
import logging

from lib.errors import InsecureConfigurationError
from lib.logs import event_line

logger = logging.getLogger("mcp_service.auth")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a bind address) is reachable from this machine alone: ``localhost`` or an address in
    127.0.0.0/8 or ``::1``. ``0.0.0.0``, ``::``, a name or any other address is not."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def require_credentials(server: str, *, secured: bool, key_names: str, allow_open: bool, host: str) -> None:
    """Refuse to start ``server`` open (no key, no OAuth: ``secured`` false) unless ``ALLOW_UNAUTHENTICATED``
    (``allow_open``) says so, and even then on a bind ``host`` that is not loopback (decision 0045). Raises
    ``InsecureConfigurationError`` naming the settings that would fix it; logs a WARNING when it serves open."""
    if secured:
        return
    if not allow_open:
        raise InsecureConfigurationError(
            f"{server}: no credentials are configured, so anyone could call it. Set {key_names} (or "
            "OAUTH_ISSUER_URL), or, to try it on this machine alone, ALLOW_UNAUTHENTICATED=true with a loopback "
            "POLICY_KB_HOST"
        )
    if not is_loopback(host):
        raise InsecureConfigurationError(
            f"{server}: ALLOW_UNAUTHENTICATED serves without credentials on loopback only, but POLICY_KB_HOST is "
            f"{host!r}. Set {key_names} (or OAUTH_ISSUER_URL), or bind to 127.0.0.1"
        )
    logger.warning(event_line("auth.open", server=server, host=host, reason="ALLOW_UNAUTHENTICATED"))
