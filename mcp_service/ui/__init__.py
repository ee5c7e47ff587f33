"""The web page at ``/ui`` (issue 26): search as of a date, the cited page, a policy's timeline and compare,
contents, governance, ingestion. ``app`` builds it, ``routes`` holds the views, ``signin`` the key check and
session cookie, ``shapes`` what the templates draw; ``templates/`` and ``static/`` (htmx, vendored) beside."""
