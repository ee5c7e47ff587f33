"""Who may call: static keys, OAuth 2.1 tokens (the resource server) and per-caller rate limits."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import NoDecode

from lib.config.base import SettingsGroup


class AuthSettings(SettingsGroup):
    """Static bearer keys of the MCP and REST paths: full and read-only; unset (and no OAuth) = the server refuses
    to start unless ``ALLOW_UNAUTHENTICATED`` (``ServiceSettings``) says it may serve open, on loopback."""

    api_key: SecretStr | None = Field(default=None, alias="MCP_API_KEY")
    read_api_key: SecretStr | None = Field(default=None, alias="MCP_READ_API_KEY")
    governance_api_key: SecretStr | None = Field(
        default=None,
        alias="GOVERNANCE_API_KEY",
        description="The governance server's own key (it only reads); unset = MCP_API_KEY, empty = no key "
        "(then ALLOW_UNAUTHENTICATED is needed)",
    )
    ui_session_secret: SecretStr | None = Field(
        default=None,
        alias="UI_SESSION_SECRET",
        description="Signs the web page's session cookie; unset: derived from MCP_API_KEY (the same on every replica)",
    )


FORBIDDEN_ALGORITHMS = ("none", "HS256", "HS384", "HS512")


class OAuthSettings(SettingsGroup):
    """The OAuth 2.1 resource server (MCP authorization): JWT access tokens of one issuer; unset issuer = off."""

    issuer_url: str | None = Field(
        default=None,
        alias="OAUTH_ISSUER_URL",
        description="The authorization server; its RFC 8414 metadata names the JWKS. Unset = static keys only",
    )
    audience: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        alias="OAUTH_AUDIENCE",
        description="Accepted token audiences, comma-separated; unset = each server's own resource URL",
    )
    algorithms: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["RS256", "PS256", "ES256", "EdDSA"],
        alias="OAUTH_ALGORITHMS",
        description="Accepted JWT signature algorithms, comma-separated (asymmetric only: never none or HS*)",
    )
    jwks_cache_seconds: int = Field(
        default=3600, ge=1, alias="OAUTH_JWKS_CACHE_SECONDS", description="How long a fetched JWKS is used"
    )
    jwks_min_refresh_seconds: float = Field(
        default=30.0,
        ge=0,
        alias="OAUTH_JWKS_MIN_REFRESH_SECONDS",
        description="At most one JWKS refetch per this interval for tokens naming an unknown kid",
    )
    leeway_seconds: int = Field(default=30, ge=0, le=300, alias="OAUTH_LEEWAY_SECONDS", description="exp/nbf slack")
    ui_client_id: str | None = Field(
        default=None,
        alias="UI_OAUTH_CLIENT_ID",
        description="The web page's client at the issuer (authorization code + PKCE); unset = key sign-in only",
    )
    ui_client_secret: SecretStr | None = Field(
        default=None, alias="UI_OAUTH_CLIENT_SECRET", description="That client's secret (client_secret_basic)"
    )
    resource_base_url: str | None = Field(
        default=None,
        alias="OAUTH_RESOURCE_BASE_URL",
        description="scheme://host callers reach the servers at (each server adds :port); unset = "
        "http://POLICY_KB_HOST",
    )

    @field_validator("audience", "algorithms", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("algorithms")
    @classmethod
    def _asymmetric_only(cls, value: list[str]) -> list[str]:
        refused = [alg for alg in value if alg.lower() in {a.lower() for a in FORBIDDEN_ALGORITHMS}]
        if refused or not value:
            raise ValueError(f"OAUTH_ALGORITHMS: {', '.join(refused) or 'empty'} not accepted (asymmetric only)")
        return value

    def resource_url(self, host: str, port: int) -> str:
        """A server's resource identifier (RFC 8707/9728): the origin callers reach it at."""
        base = (self.resource_base_url or f"http://{host}").rstrip("/")
        return f"{base}:{port}"


class RateLimitSettings(SettingsGroup):
    """Requests per caller and server, counted in Redis so every replica shares the budget; unset = no limit."""

    per_minute: int | None = Field(
        default=None, ge=1, alias="RATE_LIMIT_PER_MINUTE", description="Requests per caller per window"
    )
    window_seconds: int = Field(
        default=60, ge=1, le=3600, alias="RATE_LIMIT_WINDOW_SECONDS", description="The window (tests shorten it)"
    )
