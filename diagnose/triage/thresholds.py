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
    weak_pull_semantic_entropy: float = 0.9
    """Semantic entropy (nats) at the lowest temperature from which the pull is too weak."""
    weak_pull_first_token_divergence: float = 0.5
    """First-token divergence at the lowest temperature from which the pull is too weak."""
    strong_pull_repetition: float = 0.25
    """Repetition rate at or above which outputs are looping (pull too strong)."""
    split_pull_share: float = 0.2
    """Two centers each pulling at least this share of samples means the outputs split."""
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
