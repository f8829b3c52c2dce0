"""Fixtures for the offline judge tests: one encoder and one set of primitives per session."""

from __future__ import annotations

import pytest

from clineval.judges.offline import OfflinePrimitives
from clineval.nlp.embeddings import SentenceEncoder, get_encoder


@pytest.fixture(scope="session")
def encoder() -> SentenceEncoder:
    return get_encoder()


@pytest.fixture(scope="session")
def primitives(encoder: SentenceEncoder) -> OfflinePrimitives:
    return OfflinePrimitives(encoder=encoder)
