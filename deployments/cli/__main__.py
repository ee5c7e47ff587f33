"""``python -m deployments.cli``: the same CLI as the ``policy-kb`` console script."""

from deployments.cli import main

main()
