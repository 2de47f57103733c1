"""API keys (stored as sha256, shown once), per-key rate limits and a limit on failed keys.

Auth is on as soon as a key has been created (revoking the last key does not
open the service again). Keys are random 32-byte
tokens, so a plain sha256 is enough to store them (no password stretching
needed), and lookups compare digests, never the keys themselves.

Failed authentications (a key sent that is wrong, revoked or not a bearer key)
are counted per client address by :class:`FailedAuthLimiter`; past its limit the
address gets 429 with ``Retry-After`` for whatever it sends, a right key
included, until the moving window has room again. Letting a right key through
would tell a guesser which guess was right; missing credentials are not counted.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
import threading
import time
from dataclasses import dataclass

from limits import RateLimitItem, parse
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter
from sqlalchemy import delete, select

from api.db.models import ROLES, ApiKey, SignInSession, utcnow
from api.db.session import Database
from api.db.store import cancel_owned
from api.services.errors import Conflict, InvalidRequest, NotFound, RateLimited, SessionEnded, Unauthorized

KEY_PREFIX = "rdk_"


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class Caller:
    """Who is calling: a key's id, name and role, or the client address when auth is off
    (everyone is then an admin: there is nobody to keep apart)."""

    identity: str
    key_id: int | None
    rate_limit: str
    role: str = "admin"

    @property
    def scope(self) -> int | None:
        """Whose work this caller may read, list and cancel: its own key's, or None for everyone's."""
        return None if self.role == "admin" else self.key_id


def _retry_after(limiter: MovingWindowRateLimiter, item: RateLimitItem, *identifiers: str) -> str:
    """Whole seconds until the window lets one more through (at least 1)."""
    reset = limiter.get_window_stats(item, *identifiers).reset_time
    return str(max(1, int(reset - time.time()) + 1))


class FailedAuthLimiter:
    """Failed authentications per client address in a moving window (``limits`` notation);
    an empty limit turns it off."""

    def __init__(self, limit: str, storage_url: str = "memory://") -> None:
        self.limit = limit.strip()
        self._item = parse(self.limit) if self.limit else None  # a bad limit fails at start-up
        self._limiter = MovingWindowRateLimiter(storage_from_string(storage_url))

    def check(self, client: str) -> None:
        """429 while ``client`` has used up its failures; nothing is counted here."""
        if self._item is not None and not self._limiter.test(self._item, "auth-failures", client):
            raise RateLimited(
                f"too many failed authentications from {client} (limit {self.limit}); wait for Retry-After",
                "Authorization", headers={"Retry-After": _retry_after(self._limiter, self._item, "auth-failures", client)})

    def failed(self, client: str) -> None:
        if self._item is not None:
            self._limiter.hit(self._item, "auth-failures", client)


class KeyRing:
    """The unrevoked keys' digests, re-read from the database at most every ``refresh_s``.

    With ``failures``, an address that sent too many bad keys is refused (429) before
    any key it sends is looked at.
    """

    def __init__(self, db: Database, default_rate_limit: str, refresh_s: float = 5.0,
                 failures: FailedAuthLimiter | None = None) -> None:
        self.db = db
        self.default_rate_limit = default_rate_limit
        self.refresh_s = refresh_s
        self.failures = failures
        self._keys: dict[str, tuple[int, str, str | None, str]] = {}
        self._enabled = False
        self._loaded_at = float("-inf")
        self._lock = threading.Lock()

    def _current(self) -> dict[str, tuple[int, str, str | None, str]]:
        with self._lock:
            if time.monotonic() - self._loaded_at > self.refresh_s:
                with self.db.session() as session:
                    rows = session.execute(select(ApiKey.key_hash, ApiKey.id, ApiKey.name, ApiKey.rate_limit,
                                                  ApiKey.role, ApiKey.revoked_at)).all()
                self._enabled = bool(rows)
                self._keys = {digest: (key_id, name, limit, role)
                              for digest, key_id, name, limit, role, revoked in rows if revoked is None}
                self._loaded_at = time.monotonic()
            return self._keys

    @property
    def enabled(self) -> bool:
        self._current()
        return self._enabled

    def authenticate(self, authorization: str | None, client: str, session_token: str | None = None) -> Caller:
        """``session_token`` is the pages' sign-in cookie (:meth:`sign_in`); callers pass it for
        reading requests only (GET), so a cookie can never start work on its own. A cookie
        that names no live session is :class:`SessionEnded`, not a failed authentication:
        a revoked key left in a browser must not lock its address out for everyone."""
        keys = self._current()
        if not self._enabled:
            return Caller(f"addr:{client}", None, self.default_rate_limit)
        if self.failures is not None:
            self.failures.check(client)
        if not authorization and session_token:
            return self._session_caller(session_token)
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            if authorization:  # something sent, but not a key: counts; nothing sent does not
                self._failed(client)
            raise Unauthorized("send an API key as `Authorization: Bearer KEY`", "Authorization",
                               headers={"WWW-Authenticate": "Bearer"})
        found = keys.get(hash_key(token.strip()))
        if found is None:
            self._failed(client)
            raise Unauthorized("unknown or revoked API key", "Authorization", headers={"WWW-Authenticate": "Bearer"})
        key_id, name, limit, role = found
        return Caller(f"key:{name}", key_id, limit or self.default_rate_limit, role)

    def _session_caller(self, token: str) -> Caller:
        with self.db.session() as session:
            row = session.execute(
                select(ApiKey.id, ApiKey.name, ApiKey.rate_limit, ApiKey.role)
                .join(SignInSession, SignInSession.api_key_id == ApiKey.id)
                .where(SignInSession.token_hash == hash_key(token), SignInSession.expires_at > utcnow(),
                       ApiKey.revoked_at.is_(None))).first()
        if row is None:
            raise SessionEnded("your sign-in has ended; sign in again", "Authorization",
                               headers={"WWW-Authenticate": "Bearer"})
        return Caller(f"key:{row.name}", row.id, row.rate_limit or self.default_rate_limit, row.role)

    def sign_in(self, key: str, client: str, ttl_s: int) -> str:
        """A new session of ``key`` (checked as :meth:`authenticate` checks it) lasting ``ttl_s``:
        the token for the cookie; only its sha256 is stored. Expired sessions are dropped."""
        caller = self.authenticate(f"Bearer {key}", client)
        if caller.key_id is None:  # no keys exist: there is nothing to sign in to
            return ""
        token = secrets.token_urlsafe(32)
        now = utcnow()
        with self.db.session() as session:
            session.execute(delete(SignInSession).where(SignInSession.expires_at <= now))
            session.add(SignInSession(token_hash=hash_key(token), api_key_id=caller.key_id, created_at=now,
                                      expires_at=now + dt.timedelta(seconds=ttl_s)))
        return token

    def sign_out(self, token: str) -> None:
        with self.db.session() as session:
            session.execute(delete(SignInSession).where(SignInSession.token_hash == hash_key(token)))

    def _failed(self, client: str) -> None:
        if self.failures is not None:
            self.failures.failed(client)

    def invalidate(self) -> None:
        with self._lock:
            self._loaded_at = float("-inf")


class RateLimiter:
    """A moving window per caller, kept by the ``limits`` library (memory or Redis storage)."""

    def __init__(self, storage_url: str = "memory://") -> None:
        self._limiter = MovingWindowRateLimiter(storage_from_string(storage_url))

    def check(self, caller: Caller) -> None:
        item = parse(caller.rate_limit)
        if not self._limiter.hit(item, caller.identity):
            raise RateLimited(f"rate limit {caller.rate_limit} exceeded for {caller.identity}",
                              headers={"Retry-After": _retry_after(self._limiter, item, caller.identity)})


def create_key(db: Database, name: str, rate_limit: str | None = None, role: str = "user") -> str:
    """Store a new key's digest and return the key; it cannot be shown again. A ``user`` key
    reads, lists and cancels its own work only, an ``admin`` key everyone's."""
    if role not in ROLES:
        raise InvalidRequest(f"role must be one of {', '.join(ROLES)} (got {role!r})", "role")
    if rate_limit:
        parse(rate_limit)  # a bad limit string fails here, not at the first request
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    with db.session() as session:
        if session.scalar(select(ApiKey.id).where(ApiKey.name == name)) is not None:
            raise Conflict(f"an API key named {name!r} exists", "name")
        session.add(ApiKey(name=name, key_hash=hash_key(key), rate_limit=rate_limit, role=role))
    return key


def revoke_key(db: Database, name: str) -> None:
    """Revoke a key: its requests and sign-in sessions stop working at once, and its queued and
    running diagnoses are cancelled (a running one stops at its next progress report)."""
    with db.session(immediate=True) as session:
        key = session.scalars(select(ApiKey).where(ApiKey.name == name)).first()
        if key is None:
            raise NotFound(f"no API key named {name!r}", "name")
        key.revoked_at = utcnow()
        cancel_owned(session, key.id)


def list_keys(db: Database) -> list[dict]:
    with db.session() as session:
        return [
            {"name": k.name, "role": k.role, "rate_limit": k.rate_limit, "created_at": k.created_at.isoformat(),
             "revoked": k.revoked_at is not None}
            for k in session.scalars(select(ApiKey).order_by(ApiKey.id))
        ]
