"""Stand-ins: when the sampled model is not the one the user serves.

The embedded default model (or a model the case marks ``stand_in: true``) samples
in place of the user's model. What such a stand-in shows about its own behaviour
(how much it wobbles, loops or rambles, how long its context window is) says
nothing about the served model, so those findings are ``info``. What a stand-in can
show stays at full severity: the input stage's findings, the outputs splitting
between the documents' centers, and the case's own settings. With the user's own
model (``model:`` a local directory, or ``--server``) every rule keeps its severity.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from diagnose.case import Case
from diagnose.report import Finding

MODEL_BEHAVIOUR: frozenset[str] = frozenset({
    "sampling.weak_pull", "sampling.strong_pull", "sampling.context_pull", "length.truncated",
    "length.context_window", "framework.sampler_portability",
})
"""Rules that read the sampled model's own behaviour (its distributions, its length, its window)."""


def stand_in_reason(case: Case, remote: bool = False) -> str | None:
    """Why the sampled model is a stand-in for the served one, or None when it is the user's own."""
    if remote:
        return None
    if case.stand_in is True:
        return f"the case marks its model ({case.model}) as a stand-in for the model it serves"
    if case.stand_in is None and case.model == "default":
        return ("the embedded default model sampled in place of the model you serve (set `model:` to a "
                "local model directory, or use --server, to judge your own)")
    return None


def as_stand_in(findings: Sequence[Finding], reason: str | None) -> list[Finding]:
    """``findings`` with the stand-in's own behaviour (:data:`MODEL_BEHAVIOUR`) at ``info``."""
    if reason is None:
        return list(findings)
    return [msgspec.structs.replace(f, severity="info", evidence={**f.evidence, "stand_in": reason})
            if f.rule in MODEL_BEHAVIOUR and f.severity != "info" else f for f in findings]
