"""``ingest_policy_revision`` started as the Prefect UI starts it (a deployment's form: JSON values, no
Python objects) for a policy that is not registered yet: with ``title`` and ``category`` the flow
registers it first, as the CLI's ``ingest --title/--category`` does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from prefect.utilities.callables import parameter_schema

from flows.ingest import ingest_policy_revision
from lib.composition import Stores
from lib.errors import PolicyNotFoundError
from lib.policies.models import PolicyCategory, RevisionStatus


def test_the_deployment_form_offers_title_and_every_category_of_a_new_policy() -> None:
    schema = parameter_schema(ingest_policy_revision.fn).model_dump()
    properties = schema["properties"]

    assert properties["title"]["description"].startswith("Title of the policy")
    assert properties["category"]["default"] == "national_policy"
    category = schema["definitions"][properties["category"]["$ref"].split("/")[-1]]
    assert category["enum"] == [c.value for c in PolicyCategory]


def test_a_form_run_with_a_title_registers_the_new_policy_and_ingests_its_revision(
    flow_stores: Stores, policy_pdf: Callable[..., Path]
) -> None:
    pdf = policy_pdf("ltn.pdf")
    form = {
        "source": "LTN_1_20",
        "file": str(pdf),
        "version_label": "July 2020",
        "effective_from": "2020-07-27",
        "title": "Cycle Infrastructure Design (LTN 1/20)",
        "category": "national_guidance",
    }

    result = ingest_policy_revision(**form)

    policy = flow_stores.policies.registry.get_policy("LTN_1_20")
    assert (policy.title, policy.category) == (form["title"], PolicyCategory.NATIONAL_GUIDANCE)
    assert result.status == RevisionStatus.ACTIVE and result.revision_id == "rev_LTN_1_20_2020_07"
    again = ingest_policy_revision(**form | {"title": "Another title", "category": "local_plan"})
    assert again.action.value == "unchanged"
    assert flow_stores.policies.registry.get_policy("LTN_1_20").title == form["title"], (
        "an existing policy is left as it is"
    )


def test_without_a_title_a_new_policy_is_still_refused(flow_stores: Stores, policy_pdf: Callable[..., Path]) -> None:
    pdf = policy_pdf("ltn.pdf")
    with pytest.raises(PolicyNotFoundError):
        ingest_policy_revision(source="LTN_1_20", file=str(pdf), version_label="July 2020", effective_from="2020-07-27")
    assert not flow_stores.policies.registry.policy_exists("LTN_1_20")
