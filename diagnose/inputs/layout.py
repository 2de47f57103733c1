"""Where things sit: the 2-D document map and the layout of the assembled prompt."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Projection:
    """The document map's 2-D frame, fitted on the documents and reusable for other texts."""

    mean: np.ndarray
    """``(d,)`` float64 mean of the document embeddings."""
    axes: np.ndarray
    """``(2, d)`` float64 principal axes; a zero row for a missing axis."""

    def __call__(self, emb: np.ndarray) -> np.ndarray:
        """Project ``(n, d)`` embeddings (same embedder, L2-normalised) to ``(n, 2)`` float32."""
        centred = np.asarray(emb, dtype=np.float64) - self.mean
        return np.round(centred @ self.axes.T, 6).astype(np.float32)


def fit_projection(emb: np.ndarray) -> Projection | None:
    """Deterministic PCA of ``(n, d)`` embeddings; None with fewer than 2 rows.

    Each axis's sign is fixed so that its largest-magnitude loading is positive;
    an axis without spread (n < 3, identical rows) stays zero.
    """
    emb = np.asarray(emb, dtype=np.float64)
    if emb.ndim != 2 or emb.shape[0] < 2:
        return None
    mean = emb.mean(axis=0)
    _, s, vt = np.linalg.svd(emb - mean, full_matrices=False)
    axes = np.zeros((2, emb.shape[1]), dtype=np.float64)
    for k in range(min(2, vt.shape[0])):
        if s[k] > 1e-9:
            axes[k] = vt[k] * np.sign(vt[k][np.argmax(np.abs(vt[k]))])
    return Projection(mean, axes)


def project_2d(emb: np.ndarray) -> np.ndarray:
    """The documents' own map positions: ``(n, 2)`` float32, all zero with fewer than 2 rows."""
    projection = fit_projection(emb)
    return projection(emb) if projection else np.zeros((len(emb), 2), dtype=np.float32)


_DELIMITER = re.compile(r"\n\s*\n|[-=_*#]{3,}|\[\w*\d+\]|\bdoc(?:ument)?\s*\w*\s*[:\]\d]|<[^>]+>|\n\s*\d+[.)]|\n\s*[-*•]", re.I)


def delimiter_issue(texts: list[str], template: str | None, prompt: str | None) -> str | None:
    """Say so when the documents in a custom template run together without delimiters.

    With the assembled ``prompt``, the gap between each pair of consecutive
    documents must hold a blank line, a rule, a tag or a numbered label.
    Without it, a template whose ``{documents}`` slot sits inside a line is flagged.
    """
    if template is None or len(texts) < 2:
        return None
    if prompt:
        pos = 0
        spans = []
        for t in texts:
            at = prompt.find(t.strip(), pos) if t.strip() else -1
            if at < 0:
                return None
            spans.append((at, at + len(t.strip())))
            pos = at + len(t.strip())
        for (_, end), (start, _) in zip(spans, spans[1:]):
            if not _DELIMITER.search(prompt[end:start]):
                return "documents run together in the prompt with no delimiter between them"
        return None
    line = next((ln for ln in template.splitlines() if "{documents}" in ln), "")
    if line.strip() != "{documents}" and not re.search(r"[:>\]]\s*\{documents\}\s*$", line):
        return "the template puts {documents} inside a line of text with no delimiters around it"
    return None


def center_position(
    prompt: str | None,
    texts: list[str],
    members: list[int],
    count_tokens: Callable[[str], int] | None,
) -> float | None:
    """Where the given documents sit in ``prompt``: mean centre as a fraction 0..1.

    Measured in tokens when ``count_tokens`` is given, else in characters.
    None when there is no prompt or a document is not found in it.
    """
    if not prompt or not members:
        return None
    measure = count_tokens or len
    total = measure(prompt)
    if total <= 0:
        return None
    fractions = []
    for i in members:
        text = texts[i].strip()
        at = prompt.find(text) if text else -1
        if at < 0:
            return None
        middle = at + len(text) // 2
        fractions.append(measure(prompt[:middle]) / total)
    return float(np.clip(np.mean(fractions), 0.0, 1.0))


def lost_in_the_middle(position: float | None, prompt_tokens: int, min_tokens: int, start: float, end: float) -> bool:
    """True when the strongest center sits in the middle of a long prompt: ``prompt_tokens`` at
    least ``min_tokens`` and ``position`` (0 start, 1 end) in ``[start, end]``, both ends included.

    The one decision behind both the report's ``input.lost_in_the_middle`` and the finding of
    that name; the numbers are ``TriageThresholds.lost_in_middle_*``."""
    return position is not None and prompt_tokens >= min_tokens and start <= position <= end
