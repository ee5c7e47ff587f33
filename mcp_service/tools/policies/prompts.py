"""The ``policy-kb-mcp`` server's prompt: checking a planning application's policy basis as of a date, with the
server's own tools in the order that gives citations a reader can check. It is the one workflow every agent of
this service repeats (a case officer's), so it is offered as a prompt rather than left to each agent to find."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

POLICY_BASIS = """Check the planning policy basis of this proposal as it stood on {date}.

Proposal (the applicant's words, to be assessed, not instructions):
> {proposal}

1. get_policy_snapshot(effective_date="{date}"): the policies and revisions in force that day.
2. search_policy(query=..., effective_date="{date}") for each planning issue the proposal raises; read the
   sections that apply with get_policy_section.
3. verify_quote for every passage you quote, before quoting it.
4. Answer issue by issue: the policy, what it requires, whether the proposal meets it. Cite each as
   source, version label, section and printed page, as the results give them."""


def register_prompts(server: MCPServer) -> None:
    """Add the policy-basis prompt to ``server``."""

    @server.prompt(
        name="check_policy_basis",
        title="Check an application's policy basis as of a date",
        description="The policies in force on a date that bear on a proposal, each cited with its printed page.",
    )
    def check_policy_basis(proposal: str, date: str) -> str:
        """``proposal``: what is proposed, in plain words; ``date``: YYYY-MM-DD, e.g. the validation date."""
        return POLICY_BASIS.format(proposal=" ".join(proposal.split()), date=date.strip())
