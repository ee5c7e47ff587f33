"""Settings: read once from the environment into typed groups, one per concern, then passed in.

Nothing else in the project reads ``os.environ`` for configuration. Each group is a pydantic-settings
model that reads only its documented environment names (never its field names: ``HOST`` or ``URL`` in a
shell must not leak in), so a consumer can be handed the one group it reads. Derived defaults
(``CHROMA_PERSIST_DIR``, ``OBJECT_STORE_URL``, ``MODEL_CACHE_DIR``, ``ALLOWED_FILE_ROOTS``) are resolved
in ``settings.Settings``, so every consumer sees the same absolute paths.

The groups live by concern: ``stores`` (paths, Redis, Chroma, object store), ``pipeline`` (extraction,
embedding, search, files), ``access`` (keys, OAuth, rate limits), ``servers`` (ports, kb, governance, jobs,
observability); ``settings`` joins them and loads them.
"""

from lib.config.access import FORBIDDEN_ALGORITHMS, AuthSettings, OAuthSettings, RateLimitSettings
from lib.config.base import SettingsGroup
from lib.config.pipeline import EmbeddingSettings, ExtractionSettings, FileSettings, SearchSettings
from lib.config.servers import GovernanceSettings, JobSettings, KbSettings, ObservabilitySettings, ServiceSettings
from lib.config.settings import GROUPS, OVERRIDES, Settings, load_settings
from lib.config.stores import ChromaSettings, ObjectStoreSettings, PathSettings, RedisSettings

__all__ = [
    "FORBIDDEN_ALGORITHMS",
    "GROUPS",
    "OVERRIDES",
    "AuthSettings",
    "ChromaSettings",
    "EmbeddingSettings",
    "ExtractionSettings",
    "FileSettings",
    "GovernanceSettings",
    "JobSettings",
    "KbSettings",
    "OAuthSettings",
    "ObjectStoreSettings",
    "ObservabilitySettings",
    "PathSettings",
    "RateLimitSettings",
    "RedisSettings",
    "SearchSettings",
    "ServiceSettings",
    "Settings",
    "SettingsGroup",
    "load_settings",
]
