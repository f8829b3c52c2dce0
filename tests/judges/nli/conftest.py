"""Fixtures for the nli judge tests: a tiny random ONNX model, built once per session."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.judges.nli import tiny


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A three-way tiny model (max length 32) in a folder named ``tiny-nli``."""
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    return tiny.build(tmp_path_factory.mktemp("models") / "tiny-nli")
