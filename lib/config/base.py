"""The base of every settings group: read from its documented environment names only."""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict


class SettingsGroup(BaseSettings):
    """A settings group: populated by its environment names (aliases) only; unknown names are refused."""

    model_config = SettingsConfigDict(env_file=None, extra="forbid", validate_by_alias=True, validate_by_name=False)
