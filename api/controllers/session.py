"""Signing in to the pages when API keys are configured.

A browser cannot send ``Authorization: Bearer``, so ``/login`` takes a key in a
form, starts a server-side session (:meth:`api.services.auth.KeyRing.sign_in`) and
keeps its token, never the key, in an HttpOnly, SameSite=Strict cookie. The guard
accepts that cookie for reading requests only (GET/HEAD): starting work still needs
the header. A wrong key in the form counts against the address's failed-authentication
limit (:class:`api.services.auth.FailedAuthLimiter`), as a wrong key on the API does.
A sign-in posted from another site (``Origin`` or ``Sec-Fetch-Site`` says so, or ``Origin``
is ``null``) is refused with 403: another page must not sign a browser in to its own key
(login CSRF). Sign-in attempts are limited to :data:`LOGIN_RATE_LIMIT` per client address.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from litestar import Controller, Request, Response, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body, QueryParameter
from litestar.response import Redirect

from api.security import SESSION_COOKIE, content_security_policy
from api.pages.render import Renderer
from api.services.auth import Caller
from api.services.errors import Forbidden, ServiceError

LOGIN_RATE_LIMIT = "10/minute"
"""Sign-in attempts (right or wrong) per client address; past it 429 with ``Retry-After``."""
_renderer = Renderer()
_CSP_WITH_FORM = content_security_policy("'self'")


def local_path(target: str | None) -> str:
    """Only paths on this site: ``//host`` and ``https://host`` would be open redirects, and so
    would ``/\t/host``: browsers drop tabs and newlines from URLs, so no control character passes."""
    if (not target or not target.startswith("/") or target.startswith("//") or "\\" in target
            or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in target)):
        return "/"
    return target


class SessionController(Controller):
    include_in_schema = False

    @get("/login", media_type="text/html")
    async def form(self, next_page: Annotated[str | None, QueryParameter(name="next")] = None) -> Response[str]:
        return _renderer.page("login.html.j2", next_page=local_path(next_page), error=None, active="",
                              form_action="'self'", headers={"Content-Security-Policy": _CSP_WITH_FORM})

    @post("/login", media_type="text/html", status_code=303)
    async def login(
        self,
        request: Request,
        data: Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)],
    ) -> Response[str]:
        target = local_path(data.get("next"))
        key = (data.get("key") or "").strip()
        client = request.client.host if request.client else "unknown"
        try:
            if cross_site(request):
                raise Forbidden("a sign-in must be posted from this site's own form")
            request.app.state.limiter.check(Caller(f"login:{client}", None, LOGIN_RATE_LIMIT))
            token = request.app.state.key_ring.sign_in(key, client, request.app.state.session_ttl_s)
        except ServiceError as exc:
            # exc.headers: WWW-Authenticate on 401, Retry-After on 429 (too many tries or failed keys)
            return _renderer.page("login.html.j2", exc.status, next_page=target, error=exc.detail, active="",
                                  form_action="'self'",
                                  headers={**exc.headers, "Content-Security-Policy": _CSP_WITH_FORM})
        response = Redirect(target, status_code=303)
        if token:
            response.set_cookie(SESSION_COOKIE, token, httponly=True, samesite="strict",
                                secure=request.url.scheme == "https", path="/",
                                max_age=request.app.state.session_ttl_s)
        return response

    @post("/logout", status_code=303)
    async def logout(self, request: Request) -> Response[None]:
        token = request.cookies.get(SESSION_COOKIE)
        if token:
            request.app.state.key_ring.sign_out(token)
        response = Redirect("/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path="/")
        return response


def cross_site(request: Request) -> bool:
    """Whether the form may have been posted from another site: ``Sec-Fetch-Site`` (every
    current browser sends it) says so, or ``Origin`` names another host, or is ``null``. The
    pages' ``Referrer-Policy: same-origin`` keeps the origin on their own form posts, so a
    ``null`` origin comes from elsewhere (a sandboxed frame, a ``data:`` page, a redirect):
    refused. Clients that send neither (curl, scripts) are not browsers."""
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site not in ("same-origin", "none"):
        return True
    origin = request.headers.get("origin")
    if origin is None:
        return False
    if origin == "null":
        return True
    return urlsplit(origin).netloc.lower() != request.headers.get("host", "").lower()
