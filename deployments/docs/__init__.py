"""The documentation's reference tables, generated from the code, and the check of its links.

``python -m deployments.docs`` (``make docs``) rewrites every block between ``<!-- BEGIN GENERATED: name -->`` and
``<!-- END GENERATED: name -->`` in ``docs/``: each server's tools (``tool_table``), the error types
(``error_table``) and the settings (``settings_table``). ``tests/test_docs_generated.py`` fails when a committed
block differs from what the code gives now; ``tests/test_docs_links.py`` checks every link (``links``).
"""
