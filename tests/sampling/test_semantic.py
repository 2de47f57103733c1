"""Meaning clusters on synthetic unit vectors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from diagnose.sampling.semantic import meaning_clusters


def _unit(*angles_deg: float) -> np.ndarray:
    """One 2-d unit vector per angle; cos(a - b) is the similarity."""
    rad = np.radians(np.array(angles_deg, dtype=np.float64))
    return np.stack([np.cos(rad), np.sin(rad)], axis=1).astype(np.float32)


def test_texts_equal_after_the_project_normaliser_share_a_cluster():
    # Case, punctuation, spacing, "ß" and digit separators: four spellings of one answer.
    texts = ["  The answer: 4,411!  ", "THE answer\n\t4411", "the ANSWER 4411.", "Straße", "STRASSE", "..."]
    vectors = _unit(0, 90, 180, 45, 225, 135)  # no two rows are similar
    assert meaning_clusters(texts, vectors) == [0, 0, 0, 1, 1, 2]


def test_identical_normalised_texts_share_a_cluster_whatever_the_vectors():
    texts = ["Paris.", "London", "paris"]
    vectors = _unit(0, 60, 180)  # "paris" points the opposite way
    assert meaning_clusters(texts, vectors) == [0, 1, 0]


def test_cosine_threshold_links_pairs():
    # cos 20deg = 0.940 >= 0.85 ; cos 40deg = 0.766 < 0.85
    texts = ["a", "b", "c"]
    assert meaning_clusters(texts, _unit(0, 20, 60)) == [0, 0, 1]
    assert meaning_clusters(texts, _unit(0, 40, 80)) == [0, 1, 2]
    assert meaning_clusters(texts, _unit(0, 40, 80), threshold=math.cos(math.radians(41))) == [0, 0, 0]


def test_threshold_is_inclusive():
    vectors = np.array([[1.0, 0.0], [0.5, math.sqrt(0.75)]], dtype=np.float32)
    similarity = float(vectors[0] @ vectors[1])
    assert meaning_clusters(["a", "b"], vectors, threshold=similarity) == [0, 0]
    assert meaning_clusters(["a", "b"], vectors, threshold=similarity + 1e-4) == [0, 1]


def test_single_link_is_transitive():
    # 0-25: cos .906 ; 25-50: .906 ; 0-50: .643 -> still one cluster through the middle
    assert meaning_clusters(["x", "y", "z"], _unit(0, 50, 25)) == [0, 0, 0]


def test_numbering_follows_first_appearance():
    texts = ["p", "q", "r", "s", "t"]
    vectors = _unit(90, 0, 91, 180, 1)
    assert meaning_clusters(texts, vectors) == [0, 1, 0, 2, 1]


def test_empty_texts_form_their_own_cluster():
    texts = ["", "yes", "  ", "?!", "Yes"]
    vectors = _unit(0, 0, 0, 0, 0)  # identical vectors must not pull empties in
    assert meaning_clusters(texts, vectors) == [0, 1, 0, 0, 1]


def test_unnormalised_and_zero_rows():
    vectors = np.array([[3.0, 0.0], [0.0, 0.0], [2.0, 0.2]], dtype=np.float32)
    assert meaning_clusters(["a", "b", "c"], vectors, threshold=-1.0) == [0, 1, 0]


def test_shape_checks_and_empty_input():
    assert meaning_clusters([], np.zeros((0, 4), dtype=np.float32)) == []
    with pytest.raises(ValueError):
        meaning_clusters(["a", "b"], np.zeros((3, 4), dtype=np.float32))
    with pytest.raises(ValueError):
        meaning_clusters(["a"], np.zeros(4, dtype=np.float32))


def test_many_samples_deterministic():
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(3, 16))
    labels = [i % 3 for i in range(30)]
    vectors = centers[labels] + 0.01 * rng.normal(size=(30, 16))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    texts = [f"sample {i}" for i in range(30)]
    first = meaning_clusters(texts, vectors)
    assert first == meaning_clusters(texts, vectors)
    assert first == labels  # first appearance order 0, 1, 2 matches i % 3


def test_split_clusters_separates_samples_that_follow_different_centers():
    from diagnose.sampling.semantic import split_clusters

    assert split_clusters([0, 0, 0, 1], ["c1", "c2", "c1", "c2"]) == [0, 1, 0, 2]
    assert split_clusters([0, 1, 1], ["none", "none", "none"]) == [0, 1, 1]
    with pytest.raises(ValueError):
        split_clusters([0, 1], ["c1"])
