"""Per-run sampling metrics (contract section 3), as pure functions.

Each function takes plain per-sample records of one temperature run of ``n``
samples and returns a number (or a small dict). The docstrings say which
distribution each one reads:

* *raw*: the unmodified model distribution (temperature 1, no penalty, no truncation);
* *processed*: the distribution actually sampled from (after penalty, temperature,
  top-k and top-p);
* *sampled tokens*: only what was drawn.

Functions that average over samples raise ``ValueError`` when given no samples.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple


from diagnose.sampling.settings import SamplingSettings

if TYPE_CHECKING:
    from diagnose.decode.steps import StepRecord

__all__ = [
    "Bifurcation",
    "bifurcations",
    "center_pull",
    "compliance_rate",
    "first_token_divergence",
    "mean_entropy",
    "perplexity",
    "repetition_rate",
    "semantic_entropy",
    "truncation_rate",
    "order_divergence",
]

#: The key of ``center_pull`` for samples that follow no gravity center.
NO_CENTER = "none"


class Bifurcation(NamedTuple):
    """A position where the raw top two were nearly tied and the samples split."""

    position: int
    """0-based index of the generated position (0 is the first generated token)."""
    prefix: tuple[int, ...]
    """The generated token ids shared by the samples before ``position``."""
    candidates: tuple[int, int]
    """The raw top-2 token ids at that position, most likely first."""
    margin: float
    """Raw probability of the first candidate minus that of the second."""


def _require_samples(name: str, n: int) -> None:
    if n == 0:
        raise ValueError(f"{name} needs at least one sample")




def first_token_divergence(first_tokens: Sequence[int]) -> float:
    """Distinct first generated tokens / n (1/n when all samples agree).

    Reads the sampled tokens only.
    """
    _require_samples("first_token_divergence", len(first_tokens))
    return len(set(first_tokens)) / len(first_tokens)


def mean_entropy(step_entropies: Sequence[Sequence[float]]) -> float:
    """Mean entropy (nats) of the *processed* distribution, pooled over positions.

    ``step_entropies[i][t]`` is the entropy of the distribution sample ``i`` was
    actually drawn from at generated position ``t`` (after penalty, temperature,
    top-k, top-p; 0 for greedy). All positions of all samples weigh the same, so
    longer samples count more.
    """
    _require_samples("mean_entropy", len(step_entropies))
    values = [float(h) for sample in step_entropies for h in sample]
    if not values:
        raise ValueError("mean_entropy needs at least one generated position")
    return math.fsum(values) / len(values)


def perplexity(raw_logprobs: Sequence[Sequence[float]]) -> float:
    """exp of the mean negative log-likelihood of the sampled tokens, *raw* distribution.

    ``raw_logprobs[i][t]`` is log p(token) of sample ``i`` at position ``t`` under the
    unmodified model distribution (temperature 1, no penalty, no truncation). The
    mean is pooled over all tokens of all samples.
    """
    _require_samples("perplexity", len(raw_logprobs))
    values = [float(lp) for sample in raw_logprobs for lp in sample]
    if not values:
        raise ValueError("perplexity needs at least one generated position")
    return math.exp(-math.fsum(values) / len(values))


def _sample_repetition(tokens: Sequence[int]) -> float:
    grams = [tuple(tokens[i : i + 3]) for i in range(len(tokens) - 2)]
    if not grams:
        return 0.0
    seen: set[tuple[int, ...]] = set()
    repeated = 0
    for gram in grams:
        if gram in seen:
            repeated += 1
        seen.add(gram)
    return repeated / len(grams)


def repetition_rate(token_ids: Sequence[Sequence[int]]) -> float:
    """Mean over samples of the share of a sample's token 3-grams seen earlier in it.

    Reads the sampled tokens only. A sample with ``m`` tokens has ``m - 2``
    (overlapping) 3-grams; a 3-gram counts as repeated when the same 3-gram started
    at an earlier position of the same sample. A sample shorter than 3 tokens has no
    3-gram and counts as 0.0 (it still takes part in the average).
    """
    _require_samples("repetition_rate", len(token_ids))
    return math.fsum(_sample_repetition(t) for t in token_ids) / len(token_ids)


def semantic_entropy(cluster_ids: Sequence[int]) -> float:
    """Entropy in nats of the samples' distribution over meaning clusters.

    ``cluster_ids[i]`` is sample ``i``'s cluster; the distribution is cluster size / n.
    0.0 when every sample means the same; ln(n) when all differ.
    """
    n = len(cluster_ids)
    _require_samples("semantic_entropy", n)
    probs = [count / n for count in Counter(cluster_ids).values()]
    return abs(-math.fsum(p * math.log(p) for p in probs))


def compliance_rate(flags: Sequence[bool]) -> float:
    """Share of samples that pass every constraint (``flags[i]``: sample ``i`` passed).

    With no constraints every flag is True, so the rate is 1.0. A regex constraint
    stopped at its time limit is left out of the flags (its result is unknown, see
    :class:`diagnose.sampling.constraints.ConstraintChecker`); the run lists it in
    ``unavailable``.
    """
    _require_samples("compliance_rate", len(flags))
    return sum(1 for f in flags if f) / len(flags)


def truncation_rate(finish_reasons: Sequence[str]) -> float:
    """Share of samples with ``finish_reason == "length"`` (hit ``max_new_tokens``)."""
    _require_samples("truncation_rate", len(finish_reasons))
    return sum(1 for r in finish_reasons if r == "length") / len(finish_reasons)


def center_pull(attributions: Sequence[str], center_ids: Sequence[str]) -> dict[str, float]:
    """Share of samples attributed to each gravity center, plus ``"none"``.

    ``attributions[i]`` is the center id sample ``i`` follows, or ``"none"``. The
    result has every id of ``center_ids`` (in that order) and then ``"none"`` as keys,
    zero where no sample went; the values sum to 1. An attribution that is neither a
    known center nor ``"none"`` raises ``ValueError``, as does a center called ``"none"``.
    """
    n = len(attributions)
    _require_samples("center_pull", n)
    if NO_CENTER in center_ids:
        raise ValueError(f"a gravity center may not be called {NO_CENTER!r}")
    if len(set(center_ids)) != len(center_ids):
        raise ValueError("center ids must be unique")
    counts = {cid: 0 for cid in center_ids}
    counts[NO_CENTER] = 0
    for attribution in attributions:
        if attribution not in counts:
            raise ValueError(f"sample attributed to unknown center {attribution!r}")
        counts[attribution] += 1
    return {cid: count / n for cid, count in counts.items()}


def bifurcations(
    samples: Sequence[Sequence[StepRecord]], margin: float = SamplingSettings.bifurcation_margin
) -> list[Bifurcation]:
    """Positions where the raw top two were nearly tied and the samples split there.

    Reads the *raw* top-2 probabilities and the sampled tokens. Samples that share
    the same generated prefix up to position ``t`` saw the same raw distribution at
    ``t``. A group of at least two such samples is reported when (a) the raw margin
    ``top2_probs[0] - top2_probs[1]`` at ``t`` is strictly below ``margin``
    (``SamplingSettings.bifurcation_margin``) and (b) the
    samples of the group chose at least two different tokens at ``t``. The margin
    and candidates are read from the group's first sample. The result is ordered by
    position, then by the first sample of each group.
    """
    results: list[Bifurcation] = []
    # group[i]: id of the prefix sample i has generated so far; equal ids, equal prefixes.
    group = [0] * len(samples)
    length = max((len(s) for s in samples), default=0)
    for t in range(length):
        members: dict[int, list[int]] = {}
        for i, sample in enumerate(samples):
            if t < len(sample):
                members.setdefault(group[i], []).append(i)
        for indices in members.values():
            chosen = {samples[i][t].token for i in indices}
            if len(indices) < 2 or len(chosen) < 2:
                continue
            first = samples[indices[0]][t]
            gap = first.top2_probs[0] - first.top2_probs[1]
            if gap < margin:
                prefix = tuple(step.token for step in samples[indices[0]][:t])
                results.append(Bifurcation(t, prefix, first.top2_tokens, gap))
        # Extend each prefix by the token chosen at t; number new prefixes densely.
        next_ids: dict[tuple[int, int], int] = {}
        for i, sample in enumerate(samples):
            if t < len(sample):
                key = (group[i], sample[t].token)
                group[i] = next_ids.setdefault(key, len(next_ids))
            else:
                group[i] = -1 - i  # finished: never grouped again
    return results


def order_divergence(samples: Sequence[Sequence[StepRecord]]) -> float:
    """Share of all generated positions where a temperature-last sampler order
    (llama.cpp, Ollama) would have kept a different candidate set. Reads the
    processed distribution under both orders, as recorded by the engine."""
    steps = [step for sample in samples for step in sample]
    if not steps:
        return 0.0
    return sum(step.temperature_last_differs for step in steps) / len(steps)
