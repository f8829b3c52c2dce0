"""The numpy MiniLM encoder."""

from __future__ import annotations

import importlib.util
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from clineval.errors import ClinevalError
from clineval.nlp import embeddings
from clineval.nlp.embeddings import INSTALL_COMMAND, EmbeddingModelMissing, SentenceEncoder, combine


def test_shape_norm_and_dtype(encoder: SentenceEncoder) -> None:
    vectors = encoder.encode(["The patient has a cough.", "hello world", "x"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_matches_sentence_transformers_reference(encoder: SentenceEncoder) -> None:
    # First values of sentence-transformers' all-MiniLM-L6-v2 embedding of "hello world".
    expected = np.array([-0.03447727, 0.03102322, 0.00673497, 0.02610897, -0.03936202], dtype=np.float32)
    assert np.allclose(encoder.encode(["hello world"])[0, :5], expected, atol=1e-6)


def test_similarities_order_paraphrase_above_unrelated(encoder: SentenceEncoder) -> None:
    paraphrase = encoder.similarity("The patient has high blood pressure.", "The patient is hypertensive.")
    unrelated = encoder.similarity("The patient has high blood pressure.", "The weather is sunny today.")
    assert paraphrase > 0.6 > 0.2 > unrelated
    # Embeddings do not see negation: that is the assertion detector's job.
    assert encoder.similarity("Patient has chest pain.", "Patient denies chest pain.") > 0.7


def test_batching_does_not_change_vectors(encoder: SentenceEncoder) -> None:
    texts = [f"Sentence number {i} about {'long ' * (i % 7)}hypertension." for i in range(40)]
    together = encoder.encode(texts)
    encoder._cache.clear()
    alone = np.stack([encoder.encode([t])[0] for t in texts])
    assert np.abs(together - alone).max() < 1e-5


def test_cache_and_duplicates(encoder: SentenceEncoder) -> None:
    before = encoder.embedded
    first = encoder.encode(["a cached sentence about asthma", "a cached sentence about asthma"])
    assert encoder.embedded == before + 1
    again = encoder.encode(["a cached sentence about asthma"])
    assert encoder.embedded == before + 1
    assert np.array_equal(first[0], again[0]) and np.array_equal(first[0], first[1])


def test_thread_safe(encoder: SentenceEncoder) -> None:
    texts = [f"Concurrent sentence {i} about diabetes and insulin." for i in range(24)]
    expected = encoder.encode(texts)
    encoder._cache.clear()
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda t: encoder.encode([t])[0], texts))
    assert np.abs(np.stack(results) - expected).max() < 1e-5


def test_empty_input(encoder: SentenceEncoder) -> None:
    assert encoder.encode([]).shape == (0, 384)


def test_combine_is_normalised() -> None:
    vectors = np.eye(2, 384, dtype=np.float32)
    mixed = combine(vectors, [1, 3])
    assert np.isclose(np.linalg.norm(mixed), 1.0) and mixed[1] > mixed[0]


def test_missing_weights_name_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a, **k: None)
    with pytest.raises(EmbeddingModelMissing) as info:
        embeddings.model_directory()
    assert isinstance(info.value, ClinevalError)
    assert INSTALL_COMMAND in str(info.value) and "--no-deps" in str(info.value)
