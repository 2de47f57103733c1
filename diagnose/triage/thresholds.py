"""Thresholds the triage rules read (a group of :class:`diagnose.settings.Settings`).

Every number a rule compares against lives here, so a team can tune the
checklist without touching rule code; each finding's evidence repeats the
threshold it was judged by.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TriageThresholds:
    noise_share_warn: float = 0.34
    """Share of documents flagged as noise at or above which the context is called diluted."""
    lost_in_middle_tokens: int = 1500
    """Prompts shorter than this are too short for position effects to matter."""
    lost_in_middle_start: float = 0.25
    """The strongest center's position in the prompt (0 start, 1 end) from which it sits in
    the middle, where a long context loses it ("lost in the middle") ..."""
    lost_in_middle_end: float = 0.75
    """... up to this position (both ends included)."""
    weak_pull_semantic_entropy_normalized: float = 0.325
    """Normalised semantic entropy (semantic entropy / ln n: 0 all samples mean the same,
    1 all differ) at the lowest temperature from which the pull is too weak. 0.325 is
    0.9 nats at the default 16 seeds (ln 16 = 2.77)."""
    weak_pull_first_token_divergence_normalized: float = 0.45
    """Normalised first-token divergence ((distinct first tokens - 1) / (n - 1): 0 all
    agree, 1 all differ) at the lowest temperature from which the pull is too weak.
    At 16 seeds: 8 or more distinct first tokens."""
    strong_pull_repetition: float = 0.25
    """Repetition rate at or above which outputs are looping (pull too strong)."""
    split_pull_share: float = 0.2
    """Two centers each pulling at least this share of samples means the outputs split."""
    split_pull_min_samples: int = 2
    """...and at least this many samples each: with n of 5 or fewer one stray sample is
    already a 0.2 share, too little to call a split."""
    low_temperature: float = 0.3
    """Temperatures below this count as near-greedy."""
    long_output_tokens: int = 256
    """max_new_tokens at or above which near-greedy decoding risks loops."""
    tiny_top_p: float = 0.2
    """top_p at or below this makes sampling almost greedy."""
    small_top_k: int = 3
    """top_k at or below this leaves top_p almost nothing to act on."""
    high_repetition_penalty: float = 1.3
    """repetition_penalty at or above this starts to damage fluency."""
    ablation_gap: float = 0.3
    """Entropy gap (nats) between ablation variants that counts as a real difference."""
    truncation_warn: float = 0.0
    """Truncation rate above this is a warning."""
    truncation_fail: float = 0.5
    """Truncation rate at or above this fails the case."""
    framework_divergence_warn: float = 0.1
    """Share of steps at which a temperature-last order (llama.cpp, Ollama) keeps a
    different candidate set, from which the difference is material (a warning)."""
    context_near_share: float = 0.9
    """Prompt + budget above this share of the context window is a warning; above 1.0 fails."""
