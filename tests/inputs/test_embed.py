import numpy as np

from diagnose.embedding import CachedEmbedder, Embedder, l2_normalise


class CountingModel:
    """A fake SentenceTransformer that counts the texts it is asked to encode."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts, batch_size=32, convert_to_numpy=True, show_progress_bar=False):
        self.seen.extend(texts)
        return np.array([[len(t), t.count("a") + 1.0, 1.0] for t in texts], dtype=np.float32)

    def get_embedding_dimension(self) -> int:
        return 3


def test_encode_returns_unit_float32_rows():
    emb = CachedEmbedder(CountingModel(), None, name="fake")
    out = emb.encode(["alpha", "beta", ""])
    assert out.dtype == np.float32 and out.shape == (3, 3)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-5)
    assert isinstance(emb, Embedder)


def test_second_encode_hits_memory_cache():
    model = CountingModel()
    emb = CachedEmbedder(model, None, name="fake")
    first = emb.encode(["alpha", "beta"])
    second = emb.encode(["beta", "alpha"])
    assert model.seen == ["alpha", "beta"]
    np.testing.assert_array_equal(second, first[::-1])


def test_duplicates_in_one_call_are_encoded_once():
    model = CountingModel()
    CachedEmbedder(model, None, name="fake").encode(["same", "same", "other"])
    assert model.seen == ["same", "other"]


def test_disk_cache_survives_a_new_instance(tmp_path):
    model = CountingModel()
    first = CachedEmbedder(model, tmp_path, name="fake").encode(["alpha", "beta"])
    again = CachedEmbedder(model, tmp_path, name="fake").encode(["alpha", "beta", "gamma"])
    assert model.seen == ["alpha", "beta", "gamma"]
    np.testing.assert_array_equal(again[:2], first)
    assert len(list((tmp_path / "embeddings").rglob("*.npy"))) == 3


def test_cache_is_keyed_by_model_name(tmp_path):
    model = CountingModel()
    CachedEmbedder(model, tmp_path, name="one").encode(["alpha"])
    CachedEmbedder(model, tmp_path, name="two").encode(["alpha"])
    assert model.seen == ["alpha", "alpha"]


def test_l2_normalise_keeps_zero_rows():
    out = l2_normalise(np.array([[3.0, 4.0], [0.0, 0.0]]))
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]])
