"""``policy-kb``: the command line over the same flows and ``lib`` functions the MCP service and Prefect use.

Commands that change the stores (seed, ingest, reindex, delete, audit) run the Prefect flows in this
process: against ``PREFECT_API_URL`` when set (the runs show in that server's UI), else against
Prefect's local API (about ten seconds to start). Reads (search, revisions) call ``lib`` directly.
"""

from __future__ import annotations

from deployments.cli import documents, governance, policies, service, stack, tools
from deployments.cli.app import app
from lib.signals import exit_on_sigterm

app.info.help = __doc__
__all__ = ["app", "main"]
_COMMAND_MODULES = (documents, governance, policies, service, stack, tools)
"""Imported for their ``@app.command()`` registrations."""


def main() -> None:
    exit_on_sigterm()  # a command stopped with SIGTERM stops what it started, as with Ctrl-C
    app()
