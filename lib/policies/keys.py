"""Where the policy registry keeps its records in Redis (spec 000 FR-008), and the checks on the ids in them.

::

    policy:{source}                          hash   policy metadata
    policy_revision:{source}:{revision_id}   hash   revision metadata
    policy_revisions:{source}                zset   revision ids scored by effective_from (epoch days)
    policies_all                             set    every source slug
    policy_registry:generation               string random token, replaced by every write
    policy_registry:last_audit               string JSON of the last consistency audit (``audit_record``)

A source or revision id is checked before it is put into a key, so a caller's typo is an
``invalid_source``/``invalid_revision_id`` error rather than a lookup of a key that cannot exist.
"""

from __future__ import annotations

from lib.errors import InvalidRevisionIdError, InvalidSourceError
from lib.policies.models import is_valid_revision_id, is_valid_source

POLICIES_ALL = "policies_all"
GENERATION_KEY = "policy_registry:generation"
LAST_AUDIT_KEY = "policy_registry:last_audit"


def policy_key(source: str) -> str:
    return f"policy:{source}"


def revision_hash_key(source: str, revision_id: str) -> str:
    return f"policy_revision:{source}:{revision_id}"


def revisions_key(source: str) -> str:
    return f"policy_revisions:{source}"


def check_source(source: str) -> str:
    if not is_valid_source(source):
        raise InvalidSourceError(
            f"source must be an UPPER_SNAKE_CASE slug such as NPPF or LTN_1_20, got {source!r}", source=source
        )
    return source


def check_revision_id(revision_id: str) -> str:
    if not is_valid_revision_id(revision_id):
        raise InvalidRevisionIdError(
            f"revision_id may hold letters, digits, '_', '-' and '.', got {revision_id!r}", revision_id=revision_id
        )
    return revision_id
