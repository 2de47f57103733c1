"""Security headers: a Content-Security-Policy on every HTML answer of the service, and
``Cache-Control: no-store`` on every answer to a request that carried credentials (an
``Authorization`` header or the sign-in cookie), so no shared or browser cache keeps one
key's diagnoses for the next reader.

The site pages set their own strict policy (no scripts at all, see
:func:`content_security_policy`); the API docs page
under ``/schema`` gets :data:`api.openapi.DOCS_POLICY` from its router.
:func:`security_headers` is the net under both: any ``text/html`` answer that
still has no policy (Litestar's own pages, such as the 404 under ``/schema``)
gets the strict one, and every HTML answer gets ``X-Content-Type-Options: nosniff`` and
``Referrer-Policy: same-origin`` (:data:`REFERRER_POLICY`).
"""

from __future__ import annotations

from litestar.types import ASGIApp, Message, Receive, Scope, Send


SESSION_COOKIE = "rag_diagnose_key"
"""The pages' sign-in cookie (it holds a server-side session token, not the key)."""


def content_security_policy(form_action: str = "'none'") -> str:
    """No scripts, nothing remote; only a page with a form (login) may post, to this site."""
    return (f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
            f"form-action {form_action}; frame-ancestors 'none'")


REFERRER_POLICY = "same-origin"
"""Keeps the origin on the pages' own form posts (``no-referrer`` made browsers send
``Origin: null``, which the sign-in must refuse) and sends nothing to other sites."""

HTML_HEADERS = {
    "Content-Security-Policy": content_security_policy(),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": REFERRER_POLICY,
}


_CSP = b"content-security-policy"
_NOSNIFF = b"x-content-type-options"
_CACHE = b"cache-control"
_REFERRER = b"referrer-policy"


def security_headers(app: ASGIApp) -> ASGIApp:
    """ASGI middleware: adds the strict policy and ``nosniff`` to HTML answers that lack them."""
    strict = content_security_policy().encode()

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return

        credentials = _has_credentials(scope)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                names = {bytes(name).lower() for name, _ in headers}
                if credentials and _CACHE not in names:
                    headers.append((_CACHE, b"no-store"))
                    message = {**message, "headers": headers}  # type: ignore[assignment]
                content_type = next((bytes(value) for name, value in headers
                                     if bytes(name).lower() == b"content-type"), b"")
                if content_type.lower().startswith(b"text/html"):
                    if _CSP not in names:
                        headers.append((_CSP, strict))
                    if _NOSNIFF not in names:
                        headers.append((_NOSNIFF, b"nosniff"))
                    if _REFERRER not in names:
                        headers.append((_REFERRER, REFERRER_POLICY.encode()))
                    message = {**message, "headers": headers}  # type: ignore[assignment]
            await send(message)

        await app(scope, receive, send_with_headers)

    return middleware


def _has_credentials(scope: Scope) -> bool:
    for name, value in scope.get("headers") or []:
        name = bytes(name).lower()
        if name == b"authorization" or (name == b"cookie" and SESSION_COOKIE.encode() in bytes(value)):
            return True
    return False
