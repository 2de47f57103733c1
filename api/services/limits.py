"""Size limits on a case, checked before anything is stored or queued."""

from __future__ import annotations

from typing import Callable

from api.services.errors import InvalidCase, TooLarge
from api.settings import Limits
from diagnose.case import Case


def check_case_size(case: Case, limits: Limits, prompt_tokens: Callable[[Case], int] | None) -> None:
    """Raise :class:`TooLarge` naming the field that is over its limit."""
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
