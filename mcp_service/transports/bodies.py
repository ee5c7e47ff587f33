"""Reading a whole ASGI request body with a cap, for the middlewares that must see it before the app, and
handing it on to the app afterwards."""

from __future__ import annotations

from starlette.types import Message, Receive


class BodyTooLarge(Exception):
    """The body grew past the caller's limit; nothing more was read."""


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The request body, or ``None`` when the client disconnected first. Raises ``BodyTooLarge`` past ``limit``."""
    body = bytearray()
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body.extend(message.get("body", b""))
        more = message.get("more_body", False)
        if len(body) > limit:
            raise BodyTooLarge
    return bytes(body)


async def read_body_prefix(receive: Receive, limit: int) -> tuple[bytes, bool] | None:
    """The request body up to ``limit`` bytes and whether that is all of it (the rest is left unread), or
    ``None`` when the client disconnected first: for a middleware that looks at bodies but must not refuse
    a large one on the app's behalf."""
    body = bytearray()
    more = True
    while more and len(body) <= limit:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body.extend(message.get("body", b""))
        more = message.get("more_body", False)
    return bytes(body), not more


def replaying(body: bytes, receive: Receive, *, more_body: bool = False) -> Receive:
    """A ``receive`` that hands an already-read ``body`` to the next app first, then defers to ``receive``
    (``more_body``: the rest of the body is still to come from ``receive``)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": more_body}
        return await receive()

    return replay
