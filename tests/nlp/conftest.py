"""Fixtures for the offline NLP tests: the MiniLM encoder, loaded once per session."""

from __future__ import annotations

import pytest

from clineval.nlp.embeddings import SentenceEncoder, get_encoder


@pytest.fixture(scope="session")
def encoder() -> SentenceEncoder:
    return get_encoder()
