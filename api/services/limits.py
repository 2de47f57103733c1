"""Size limits on a case, checked before anything is stored or queued."""

from __future__ import annotations

from typing import Any, Callable

import msgspec

from api.services.errors import InvalidCase, TooLarge
from api.settings import Limits
from diagnose.case import Case


def check_case_size(case: Case, limits: Limits, prompt_tokens: Callable[[Case], int] | None) -> None:
    """Raise :class:`TooLarge` naming the field that is over its limit
    (:class:`InvalidCase` for a text that no database stores, see :func:`check_no_nul`)."""
    check_no_nul(msgspec.to_builtins(case))
    if case.model not in limits.models:
        raise InvalidCase(f"model {case.model!r} is not served here; allowed: {', '.join(limits.models)} "
                          "(RAG_DIAGNOSE_ALLOWED_MODELS)", "model")
    if len(case.documents) > limits.max_documents:
        raise TooLarge(f"{len(case.documents)} documents; at most {limits.max_documents} are accepted", "documents")
    samples = case.sampling.seeds * len(case.sampling.temperatures)
    if samples > limits.max_samples:
        raise TooLarge(
            f"{case.sampling.seeds} seeds x {len(case.sampling.temperatures)} temperatures = {samples} samples; "
            f"at most {limits.max_samples} are accepted", "sampling.seeds")
    if case.sampling.max_new_tokens > limits.max_new_tokens:
        raise TooLarge(
            f"max_new_tokens {case.sampling.max_new_tokens}; at most {limits.max_new_tokens} are accepted",
            "sampling.max_new_tokens")
    if prompt_tokens is not None:
        try:
            tokens = prompt_tokens(case)
        except Exception as exc:  # unknown or unloadable model: the client's field, not our crash
            raise InvalidCase(str(exc), "model") from None
        if tokens > limits.max_prompt_tokens:
            raise TooLarge(
                f"the assembled prompt has {tokens} tokens; at most {limits.max_prompt_tokens} are accepted",
                "documents")


def check_no_nul(data: Any, path: str = "") -> None:
    """Refuse a NUL character in any string of ``data``, naming where.

    PostgreSQL stores no NUL in ``text`` or ``jsonb``; refusing it on SQLite too
    keeps the two databases answering the same case the same way.
    """
    if isinstance(data, str):
        if "\x00" in data:
            raise InvalidCase(f"{path or '$'}: must not contain a NUL character (\\u0000)", path or "$")
    elif isinstance(data, dict):
        for key, value in data.items():
            check_no_nul(value, f"{path}.{key}" if path else str(key))
    elif isinstance(data, list):
        for i, item in enumerate(data):
            check_no_nul(item, f"{path}[{i}]")
