"""JSON over HTTP with retries: the transport of :class:`~diagnose.decode.remote.RemoteBackend`.

Rate limiting and server-side failures are tried again with exponential
backoff (``Retry-After`` honoured, capped at :data:`MAX_BACKOFF_S`); anything
else becomes a :class:`BackendError` naming the URL, the status and the body.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import httpx

from diagnose.errors import BackendError
from diagnose.decode.remote_trace import snippet

__all__ = ["MAX_BACKOFF_S", "RETRY_STATUSES", "JsonPoster"]

#: Statuses worth another try: rate limiting and server-side failures.
RETRY_STATUSES = frozenset({408, 429}) | frozenset(range(500, 600))
#: Longest wait between two tries, whatever ``Retry-After`` says.
MAX_BACKOFF_S = 30.0


class JsonPoster:
    """POSTs JSON bodies to one URL and returns the JSON object answered."""

    def __init__(
        self,
        url: str,
        what: str,
        client: httpx.Client,
        headers: dict[str, str],
        timeout: float,
        max_retries: int,
        backoff: float,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.url, self.what = url, what
        self._client, self._headers, self._timeout = client, headers, timeout
        self.max_retries, self.backoff, self._sleep = max_retries, backoff, sleep

    def post(self, body: dict[str, Any]) -> dict[str, Any]:
        attempts = self.max_retries + 1
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response = self._client.post(self.url, json=body, headers=self._headers, timeout=self._timeout)
            except httpx.TransportError as exc:
                if last:
                    raise BackendError(
                        f"{self.what} server at {self.url} could not be reached after "
                        f"{attempts} attempt(s): {type(exc).__name__}: {exc}"
                    ) from exc
                self._sleep(self.delay(attempt, None))
                continue
            if response.status_code in RETRY_STATUSES and not last:
                self._sleep(self.delay(attempt, response.headers.get("retry-after")))
                continue
            if response.status_code >= 400:
                tries = f" after {attempt + 1} attempt(s)" if attempt else ""
                raise BackendError(
                    f"POST {self.url} failed with HTTP {response.status_code}{tries}: {snippet(response.text)}"
                )
            try:
                data = response.json()
            except ValueError as exc:
                raise BackendError(
                    f"POST {self.url} answered HTTP {response.status_code} with a body that "
                    f"is not JSON: {snippet(response.text)}"
                ) from exc
            if not isinstance(data, dict):
                raise BackendError(f"POST {self.url} answered JSON that is not an object: {snippet(response.text)}")
            return data
        raise AssertionError("unreachable")  # pragma: no cover

    def delay(self, attempt: int, retry_after: str | None) -> float:
        """Seconds to wait before try ``attempt + 1``."""
        if retry_after:
            try:
                return min(max(float(retry_after), 0.0), MAX_BACKOFF_S)
            except ValueError:
                pass  # an HTTP date: fall back to exponential backoff
        return min(self.backoff * (2**attempt), MAX_BACKOFF_S)
