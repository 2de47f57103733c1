"""Size limits on a case, checked before anything is stored or queued."""

from __future__ import annotations

from typing import Any, Callable

import msgspec

from api.services.errors import InvalidCase, TooLarge
from api.settings import Limits
from diagnose.case import READER_CHOICES, Case, JsonConstraint, MustIncludeConstraint
from diagnose.errors import PromptTooLarge
from diagnose.prompt import check_prompt_size, prompt_size


def check_case_size(case: Case, limits: Limits, prompt_tokens: Callable[[Case], int] | None) -> int:
    """Raise :class:`TooLarge` naming the field that is over its limit
    (:class:`InvalidCase` for a text that no database stores, see :func:`check_no_nul`).

    Every path that stores a case runs this. The cheap checks come first
    (:func:`check_case_limits`: nothing is built), then, given a counter, the token
    count of the assembled prompt. Returns the assembled prompt's length in characters.
    """
    chars = check_case_limits(case, limits)
    if prompt_tokens is not None:
        check_prompt_tokens(case, limits, prompt_tokens)
    return chars


def check_raw_case(data: Any, limits: Limits) -> None:
    """What must be refused before the case is even read: reading it compiles every regex
    pattern (5,000 patterns in a 205 KB body took 26 to 39 s), so their number and size first."""
    if not isinstance(data, dict):
        return
    constraints = data.get("constraints")
    if isinstance(constraints, list):
        if len(constraints) > limits.max_constraints:
            raise TooLarge(f"{len(constraints)} constraints; at most {limits.max_constraints} are accepted "
                           "(RAG_DIAGNOSE_MAX_CONSTRAINTS)", "constraints")
        chars = sum(len(c["pattern"]) for c in constraints if isinstance(c, dict) and isinstance(c.get("pattern"), str))
        if chars > limits.max_pattern_chars:
            raise TooLarge(f"the regex patterns have {chars:,} characters together; at most "
                           f"{limits.max_pattern_chars:,} are accepted (RAG_DIAGNOSE_MAX_PATTERN_CHARS)", "constraints")
    tags = data.get("tags")
    if isinstance(tags, list) and len(tags) > limits.max_tags:
        raise TooLarge(f"{len(tags)} tags; at most {limits.max_tags} are accepted (RAG_DIAGNOSE_MAX_TAGS)", "tags")


def check_stored_fields(case: Case, limits: Limits) -> None:
    """The short free-text fields that are stored with the case, each named when too long."""
    check_raw_case(msgspec.to_builtins(case), limits)  # a case that did not come as JSON (the CLI's push)
    texts: list[tuple[str, str | None]] = [(f"tags[{i}]", tag) for i, tag in enumerate(case.tags)]
    texts += [(f"documents[{i}].source", doc.source) for i, doc in enumerate(case.documents)]
    for i, constraint in enumerate(case.constraints):
        if isinstance(constraint, MustIncludeConstraint):
            texts.append((f"constraints[{i}].text", constraint.text))
        elif isinstance(constraint, JsonConstraint):
            if len(constraint.keys) > limits.max_json_keys:
                raise TooLarge(f"{len(constraint.keys)} keys; at most {limits.max_json_keys} are accepted "
                               "(RAG_DIAGNOSE_MAX_JSON_KEYS)", f"constraints[{i}].keys")
            texts += [(f"constraints[{i}].keys[{j}]", key) for j, key in enumerate(constraint.keys)]
    for field, text in texts:
        if text is not None and len(text) > limits.max_text_chars:
            raise TooLarge(f"{len(text):,} characters; at most {limits.max_text_chars:,} are accepted "
                           "(RAG_DIAGNOSE_MAX_TEXT_CHARS)", field)


def check_case_limits(case: Case, limits: Limits) -> int:
    """Everything but the token count; the prompt's length is computed, not built
    (:func:`diagnose.prompt.check_prompt_size`). Returns that length."""
    check_no_nul(msgspec.to_builtins(case))
    check_stored_fields(case, limits)
    if case.model not in limits.models:
        raise InvalidCase(f"model {case.model!r} is not served here; allowed: {', '.join(limits.models)} "
                          "(RAG_DIAGNOSE_ALLOWED_MODELS)", "model")
    if case.reader is not None and case.reader not in READER_CHOICES:
        # The service never calls a URL a request names (no server-side request forgery):
        # its reader server, if any, is the operator's RAG_DIAGNOSE_READER.
        raise InvalidCase(f"a reader server URL is not accepted here; choose one of {', '.join(READER_CHOICES)} "
                          "(the service's own reader server is set by RAG_DIAGNOSE_READER)", "reader")
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
    return check_prompt_size(case, limits.max_prompt_chars, bound=(
        f"RAG_DIAGNOSE_MAX_PROMPT_TOKENS {limits.max_prompt_tokens} x "
        f"RAG_DIAGNOSE_PROMPT_CHARS_PER_TOKEN {limits.prompt_chars_per_token}")).chars


def check_repair_samples(case: Case, limits: Limits) -> None:
    """With ``repair=true`` a case samples its rows and up to :data:`~diagnose.repair.BUDGET_FACTOR`
    times as many again to verify repairs: all of them count against ``max_samples``."""
    from diagnose.repair import BUDGET_FACTOR

    samples = case.sampling.seeds * len(case.sampling.temperatures)
    if samples * (1 + BUDGET_FACTOR) > limits.max_samples:
        raise TooLarge(
            f"{samples} samples plus a repair budget of {BUDGET_FACTOR} x {samples} = {samples * (1 + BUDGET_FACTOR)}; "
            f"at most {limits.max_samples} are accepted with repair=true (RAG_DIAGNOSE_MAX_SAMPLES)", "sampling.seeds")


def check_prompt_tokens(case: Case, limits: Limits, prompt_tokens: Callable[[Case], int]) -> None:
    """The assembled prompt's tokens, counted with the case model's tokenizer, within the limit."""
    try:
        tokens = prompt_tokens(case)
    except PromptTooLarge:  # over the engine's own bound (diagnose.prompt.MAX_PROMPT_CHARS): 413 as it is
        raise
    except Exception as exc:  # unknown or unloadable model: the client's field, not our crash
        raise InvalidCase(str(exc), "model") from None
    if tokens > limits.max_prompt_tokens:
        # Blamed as the character check blames: at this prompt's own characters per token,
        # the part (or the repeating template) without which it would fit.
        size = prompt_size(case)
        field = size.culprit(size.chars * limits.max_prompt_tokens // tokens)
        raise TooLarge(
            f"the assembled prompt has {tokens} tokens; at most {limits.max_prompt_tokens} are accepted "
            "(RAG_DIAGNOSE_MAX_PROMPT_TOKENS)", field)


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
