"""A local NLI or fact-checking cross-encoder: loading, its labels, batched prediction.

A model folder is one of

* an ONNX export, as Hugging Face Optimum writes it (``optimum-cli export onnx --task
  text-classification``): ``model.onnx`` (or ``onnx/model.onnx``), ``tokenizer.json`` and
  ``config.json``; run with onnxruntime on CPU (``pip install 'clineval[nli]'``);
* a transformers folder: ``config.json``, the weights (``model.safetensors`` or
  ``pytorch_model.bin``) and the tokenizer files; run with transformers and torch when
  they are installed. Models that need their own code (``trust_remote_code``) are refused.

The labels come from ``config.json``'s ``id2label`` (names compared case-insensitively):
three labels entailment / neutral / contradiction (also FEVER's supports / not enough info /
refutes), two labels supported / not supported (entailment / not_entailment, consistent /
inconsistent, ...), or one logit whose sigmoid is the probability that the claim is
supported (a single-score cross-encoder). Any other layout is a :class:`ConfigError` naming
the file.

Each pair is (premise, hypothesis) = (evidence, claim), encoded as the model's tokenizer pairs
two texts, truncated to the model's length (the longer text is cut first, which is the
premise but for a claim longer than its evidence), and run in batches of similar length.
onnxruntime and transformers are imported only when a model is loaded.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from clineval.errors import ConfigError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = [
    "BATCH_SIZE",
    "FALLBACK_MAX_LENGTH",
    "INSTALL_HINT",
    "EntailmentModel",
    "LabelLayout",
    "OnnxEntailmentModel",
    "Probabilities",
    "TransformersEntailmentModel",
    "label_layout",
    "load_model",
    "read_config",
]

#: Pairs run through the model at once (sorted by length first, so little is padding).
BATCH_SIZE = 16
#: The model's length in tokens when neither tokenizer_config.json nor config.json gives one.
FALLBACK_MAX_LENGTH = 512
#: What to install for an ONNX model folder.
INSTALL_HINT = "pip install 'clineval[nli]'"
_TRANSFORMERS_HINT = "pip install transformers torch"
#: A tokenizer_config.json ``model_max_length`` above this is transformers' "no limit" sentinel.
_SANE_MAX_LENGTH = 100_000
#: Position embeddings offset by the padding index (RoBERTa and its kin): 514 positions, 512 tokens.
_OFFSET_POSITIONS = {"roberta": 2, "xlm-roberta": 2, "camembert": 2, "longformer": 2, "bart": 2}
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json")

LabelKind = Literal["three_way", "two_way", "single_logit"]

_ENTAILMENT = {"entailment", "entailed", "entails", "entail", "supports", "supported", "support"}
_NEUTRAL = {"neutral", "not_enough_info", "nei", "unknown", "undetermined"}
_CONTRADICTION = {"contradiction", "contradicted", "contradicts", "contradict", "refutes", "refuted"}
_POSITIVE = _ENTAILMENT | {"consistent", "factual", "faithful", "true", "yes", "correct", "grounded"}
_NEGATIVE = (
    {
        "not_entailment",
        "not_entailed",
        "non_entailment",
        "no_entailment",
        "not_supported",
        "unsupported",
        "not_support",
        "inconsistent",
        "not_consistent",
        "hallucinated",
        "hallucination",
        "unfaithful",
        "not_grounded",
        "false",
        "no",
        "incorrect",
    }
    | _CONTRADICTION
    | _NEUTRAL
)


def _norm(label: str) -> str:
    return re.sub(r"[\s\-]+", "_", label.strip().lower())


@dataclass(frozen=True)
class Probabilities:
    """What the model says of one (premise, claim) pair."""

    entailment: float
    """The probability that the premise supports the claim."""
    contradiction: float | None = None
    """The probability that the premise contradicts it (``None``: the model has no such label)."""
    neutral: float | None = None

    @property
    def contradicted(self) -> bool:
        """Contradiction is the most probable label (only a three-way model can say so)."""
        if self.contradiction is None:
            return False
        return self.contradiction > self.entailment and self.contradiction > (self.neutral or 0.0)

    def describe(self) -> str:
        parts = [f"P(entailment) {self.entailment:.2f}"]
        if self.contradiction is not None:
            parts.append(f"P(contradiction) {self.contradiction:.2f}")
        return ", ".join(parts)


@dataclass(frozen=True)
class LabelLayout:
    """Which output of the model is which label (see :func:`label_layout`)."""

    kind: LabelKind
    labels: tuple[str, ...]
    """The labels as config.json names them, by output index."""
    entailment: int
    neutral: int | None = None
    contradiction: int | None = None

    @property
    def n_outputs(self) -> int:
        return len(self.labels)

    def probabilities(self, logits: np.ndarray) -> list[Probabilities]:
        """One :class:`Probabilities` per row of ``logits`` (softmax, or a sigmoid for one logit)."""
        rows = np.asarray(logits, dtype=np.float64).reshape(len(logits), -1)
        if self.kind == "single_logit":
            return [Probabilities(entailment=_sigmoid(float(row[0]))) for row in rows]
        shifted = rows - rows.max(axis=1, keepdims=True)
        probs = np.exp(shifted)
        probs /= probs.sum(axis=1, keepdims=True)
        out = []
        for row in probs:
            out.append(
                Probabilities(
                    entailment=float(row[self.entailment]),
                    contradiction=None if self.contradiction is None else float(row[self.contradiction]),
                    neutral=None if self.neutral is None else float(row[self.neutral]),
                )
            )
        return out


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def read_config(folder: Path) -> dict[str, Any]:
    """``config.json`` of a model folder (a :class:`ConfigError` naming it when missing or not JSON)."""
    path = folder / "config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"{path}: missing; an NLI model folder needs the config.json with id2label that "
            "optimum-cli export and huggingface-cli download write beside the model"
        ) from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    return config


def _id2label(config: dict[str, Any], path: Path) -> tuple[str, ...]:
    raw = config.get("id2label")
    if not isinstance(raw, dict) and isinstance(config.get("label2id"), dict):
        raw = {str(index): name for name, index in config["label2id"].items()}
    if not isinstance(raw, dict) or not raw:
        raise ConfigError(f'{path}: no id2label; expected e.g. {{"0": "entailment", ...}}')
    try:
        pairs = sorted((int(index), str(name)) for index, name in raw.items())
    except (TypeError, ValueError):
        raise ConfigError(f"{path}: id2label keys must be the output indices 0, 1, ...") from None
    if [index for index, _ in pairs] != list(range(len(pairs))):
        raise ConfigError(f"{path}: id2label must name the outputs 0 to {len(pairs) - 1}, each once")
    return tuple(name for _, name in pairs)


def label_layout(config: dict[str, Any], path: Path) -> LabelLayout:
    """The label layout ``config.json`` (at ``path``) describes, or a :class:`ConfigError`
    naming the file and the layouts understood."""
    labels = _id2label(config, path)
    names = [_norm(label) for label in labels]
    if len(labels) == 1:
        return LabelLayout(kind="single_logit", labels=labels, entailment=0)
    if len(labels) == 3:
        found: dict[str, list[int]] = {"entailment": [], "neutral": [], "contradiction": []}
        for index, name in enumerate(names):
            for role, words in (
                ("entailment", _ENTAILMENT),
                ("neutral", _NEUTRAL),
                ("contradiction", _CONTRADICTION),
            ):
                if name in words:
                    found[role].append(index)
        if all(len(indices) == 1 for indices in found.values()):
            return LabelLayout(
                kind="three_way",
                labels=labels,
                entailment=found["entailment"][0],
                neutral=found["neutral"][0],
                contradiction=found["contradiction"][0],
            )
    if len(labels) == 2:
        positive = [i for i, name in enumerate(names) if name in _POSITIVE]
        negative = [i for i, name in enumerate(names) if name in _NEGATIVE]
        if len(positive) == 1 and len(negative) == 1 and positive != negative:
            return LabelLayout(kind="two_way", labels=labels, entailment=positive[0])
    raise ConfigError(
        f"{path}: id2label {dict(enumerate(labels))} is not a layout clineval reads; expected "
        "entailment/neutral/contradiction, two labels such as supported/not_supported, or one "
        "logit (a support score); if the model card says which output is which, write those "
        "names in id2label"
    )


def max_length(folder: Path, config: dict[str, Any]) -> int:
    """The model's length in tokens: tokenizer_config.json's ``model_max_length`` when it is a
    real limit, else config.json's ``max_position_embeddings`` (less the offset RoBERTa-like
    models keep for padding), else :data:`FALLBACK_MAX_LENGTH`."""
    try:
        tokenizer_config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        tokenizer_config = {}
    limit = tokenizer_config.get("model_max_length") if isinstance(tokenizer_config, dict) else None
    if isinstance(limit, int | float) and 0 < limit <= _SANE_MAX_LENGTH:
        return int(limit)
    positions = config.get("max_position_embeddings")
    if isinstance(positions, int) and positions > 0:
        offset = _OFFSET_POSITIONS.get(str(config.get("model_type", "")).lower(), 0)
        return positions - offset
    return FALLBACK_MAX_LENGTH


def file_digest(path: Path) -> str:
    """The SHA-256 of a file, hex (reads it once, in chunks)."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


class EntailmentModel(Protocol):
    """What the nli judge needs of a model (the ONNX and transformers models; a stub in tests)."""

    @property
    def max_length(self) -> int:
        """The longest pair, in tokens, the model reads (special tokens included)."""
        ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Each text's length in tokens, without special tokens."""
        ...

    def pair_overhead(self) -> int:
        """The special tokens a pair adds ([CLS] ... [SEP] ... [SEP]: 3)."""
        ...

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[Probabilities]:
        """One :class:`Probabilities` per (premise, hypothesis) pair, in order."""
        ...

    def describe(self) -> dict[str, Any]:
        """The model's identity for run records: folder, file hash, name, labels, length."""
        ...


def _batches(lengths: Sequence[int]) -> list[list[int]]:
    """Indices in batches of :data:`BATCH_SIZE`, shortest pairs first."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    return [order[start : start + BATCH_SIZE] for start in range(0, len(order), BATCH_SIZE)]


def _check_outputs(logits: np.ndarray, layout: LabelLayout, where: Path, n: int) -> None:
    if logits.ndim != 2 or logits.shape[0] != n or logits.shape[1] != layout.n_outputs:
        raise ConfigError(
            f"{where}: the model gives outputs of shape {tuple(logits.shape)}, but config.json's "
            f"id2label names {layout.n_outputs} label(s); expected ({n}, {layout.n_outputs})"
        )


class OnnxEntailmentModel:
    """An ONNX export run with onnxruntime on CPU, tokenized by its ``tokenizer.json``."""

    def __init__(self, folder: Path, model_file: Path, *, digest: bool = True):
        try:
            import onnxruntime as ort
        except ImportError:
            raise ConfigError(
                f"{folder}: an ONNX NLI model needs onnxruntime, which is not installed: {INSTALL_HINT}"
            ) from None
        from tokenizers import Tokenizer

        self.folder = folder
        self.model_file = model_file
        self.config = read_config(folder)
        self.layout = label_layout(self.config, folder / "config.json")
        self._max_length = max_length(folder, self.config)
        tokenizer_file = folder / "tokenizer.json"
        if not tokenizer_file.is_file():
            raise ConfigError(
                f"{tokenizer_file}: missing; an ONNX NLI model folder needs the fast tokenizer's "
                "tokenizer.json (optimum-cli export onnx writes it beside model.onnx)"
            )
        try:
            self.tokenizer: Tokenizer = Tokenizer.from_file(str(tokenizer_file))
        except Exception as exc:  # the tokenizers library raises a bare Exception
            raise ConfigError(
                f"{tokenizer_file}: not a tokenizer the tokenizers library reads ({exc})"
            ) from None
        self._pad_id = self._find_pad_id()  # before no_padding(), which forgets the file's padding
        self.tokenizer.no_padding()  # batches are padded here, to their own longest pair
        self.tokenizer.enable_truncation(max_length=self._max_length, strategy="longest_first")
        options = ort.SessionOptions()
        options.log_severity_level = 3  # errors only: no graph-optimisation chatter on stderr
        # Idle worker threads sleep instead of spinning, so that the offline judge's MiniLM
        # workers and other processes keep the cores they share (see docs/offline-judge.md).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self.session = ort.InferenceSession(
                str(model_file), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own exception types, all user-file problems here
            raise ConfigError(f"{model_file}: onnxruntime cannot load it ({exc})") from None
        self._inputs: list[tuple[str, Any]] = []
        for spec in self.session.get_inputs():
            if spec.name not in ("input_ids", "attention_mask", "token_type_ids"):
                raise ConfigError(
                    f"{model_file}: input {spec.name!r} is not one clineval feeds; expected "
                    "input_ids, attention_mask and token_type_ids (a text-classification export)"
                )
            self._inputs.append((spec.name, np.int32 if spec.type == "tensor(int32)" else np.int64))
        outputs = [o.name for o in self.session.get_outputs()]
        self._output = "logits" if "logits" in outputs else outputs[0]
        self.digest = file_digest(model_file) if digest else None
        self.predict([("probe", "probe")])  # outputs that do not match the labels fail here, not mid-run

    @property
    def max_length(self) -> int:
        return self._max_length

    def _find_pad_id(self) -> int:
        padding = self.tokenizer.padding
        if padding and isinstance(padding.get("pad_id"), int):
            return int(padding["pad_id"])
        pad = self.config.get("pad_token_id")
        if isinstance(pad, int):
            return pad
        for token in ("[PAD]", "<pad>"):
            found = self.tokenizer.token_to_id(token)
            if found is not None:
                return int(found)
        return 0  # masked out by attention_mask, whatever it is

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        encodings = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        # encode_batch truncates too; a text longer than the model counts as the model's length
        return [len(e.ids) + sum(len(o.ids) for o in e.overflowing) for e in encodings]

    def pair_overhead(self) -> int:
        return int(self.tokenizer.num_special_tokens_to_add(True))

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[Probabilities]:
        if not pairs:
            return []
        encodings = self.tokenizer.encode_batch([(premise, claim) for premise, claim in pairs])
        out: list[Probabilities | None] = [None] * len(pairs)
        for batch in _batches([len(e.ids) for e in encodings]):
            width = max(len(encodings[i].ids) for i in batch)
            arrays = {
                name: np.zeros((len(batch), width), dtype=np.int64)
                for name in ("input_ids", "attention_mask", "token_type_ids")
            }
            arrays["input_ids"].fill(self._pad_id)
            for row, i in enumerate(batch):
                encoding = encodings[i]
                n = len(encoding.ids)
                arrays["input_ids"][row, :n] = encoding.ids
                arrays["attention_mask"][row, :n] = encoding.attention_mask
                arrays["token_type_ids"][row, :n] = encoding.type_ids
            feed = {name: arrays[name].astype(dtype) for name, dtype in self._inputs}
            logits = np.asarray(self.session.run([self._output], feed)[0])
            _check_outputs(logits, self.layout, self.model_file, len(batch))
            for i, probabilities in zip(batch, self.layout.probabilities(logits), strict=True):
                out[i] = probabilities
        return [p for p in out if p is not None]

    def describe(self) -> dict[str, Any]:
        return _describe(self, "onnxruntime", self.model_file, self.digest)


class TransformersEntailmentModel:
    """A transformers folder run with torch on CPU (both imported only here)."""

    def __init__(self, folder: Path, weights: Path, *, digest: bool = True):
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
        except ImportError:
            raise ConfigError(
                f"{folder}: a transformers model folder needs transformers and torch, which are not "
                f"installed: {_TRANSFORMERS_HINT} (or export it to ONNX and {INSTALL_HINT})"
            ) from None
        self.folder = folder
        self.model_file = weights
        self.config = read_config(folder)
        self.layout = label_layout(self.config, folder / "config.json")
        self._max_length = max_length(folder, self.config)
        self._torch = torch
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
            self.model = AutoModelForSequenceClassification.from_pretrained(
                str(folder), local_files_only=True, trust_remote_code=False
            )
        except Exception as exc:  # transformers raises many types for a folder it cannot read
            raise ConfigError(f"{folder}: transformers cannot load it as a text classifier ({exc})") from None
        self.model.eval()
        self.digest = file_digest(weights) if digest else None
        self.predict([("probe", "probe")])

    @property
    def max_length(self) -> int:
        return self._max_length

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        ids = self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        return [len(row) for row in ids]

    def pair_overhead(self) -> int:
        return int(self.tokenizer.num_special_tokens_to_add(pair=True))

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[Probabilities]:
        if not pairs:
            return []
        lengths = self.count_tokens([p + " " + c for p, c in pairs])
        out: list[Probabilities | None] = [None] * len(pairs)
        for batch in _batches(lengths):
            encoded = self.tokenizer(
                [pairs[i][0] for i in batch],
                [pairs[i][1] for i in batch],
                truncation="longest_first",
                max_length=self._max_length,
                padding=True,
                return_tensors="pt",
            )
            with self._torch.inference_mode():
                logits = self.model(**encoded).logits.float().numpy()
            _check_outputs(logits, self.layout, self.model_file, len(batch))
            for i, probabilities in zip(batch, self.layout.probabilities(logits), strict=True):
                out[i] = probabilities
        return [p for p in out if p is not None]

    def describe(self) -> dict[str, Any]:
        return _describe(self, "transformers", self.model_file, self.digest)


def _describe(
    model: OnnxEntailmentModel | TransformersEntailmentModel, runtime: str, file: Path, digest: str | None
) -> dict[str, Any]:
    return {
        "path": str(model.folder),
        "runtime": runtime,
        "file": file.name,
        "sha256": digest,
        "name": model.config.get("_name_or_path") or None,
        "model_type": model.config.get("model_type") or None,
        "labels": list(model.layout.labels),
        "label_layout": model.layout.kind,
        "max_length": model.max_length,
    }


def _onnx_file(folder: Path) -> Path | None:
    for candidate in (folder / "model.onnx", folder / "onnx" / "model.onnx"):
        if candidate.is_file():
            return candidate
    found = sorted(folder.glob("*.onnx"))
    return found[0] if len(found) == 1 else None


def load_model(folder: Path, *, digest: bool = True) -> EntailmentModel:
    """The model in ``folder``: an ONNX export if it holds ``model.onnx``, else a transformers
    folder (see the module docstring). ``digest``: hash the weights file for run records."""
    if not folder.is_dir():
        raise ConfigError(f"nli model folder {folder}: no such folder")
    onnx_file = _onnx_file(folder)
    loader: Callable[..., EntailmentModel]
    if onnx_file is not None:
        loader, file = OnnxEntailmentModel, onnx_file
    else:
        weights = next((folder / name for name in _WEIGHT_FILES if (folder / name).is_file()), None)
        if weights is None:
            raise ConfigError(
                f"nli model folder {folder}: no model.onnx and no transformers weights "
                f"({', '.join(_WEIGHT_FILES)}); expected an ONNX export (optimum-cli export onnx "
                "--task text-classification) or a downloaded transformers model"
            )
        loader, file = TransformersEntailmentModel, weights
    return loader(folder, file, digest=digest)
