"""The policy REST API mounted at ``/api/v1`` (spec 001): ``app`` builds it, ``routes`` holds the
endpoints, ``schemas`` their response shapes, ``errors`` the one error mapping, ``upload`` the streamed
multipart upload and ``jobs`` the ingestion jobs it starts."""
