"""The service's REST APIs. ``/api/v1`` (``app`` builds it over the process's ``Stores``): ``routes``, the
policies (spec 001), and ``kb_routes``, the kb engine (spec 002), with ``schemas`` their response shapes, ``errors``
the one error mapping, ``upload`` the streamed multipart upload and ``jobs`` the ingestion jobs it starts.
``governance``: ``GET /query`` and the ``/health`` of the governance server's port (spec 004)."""
