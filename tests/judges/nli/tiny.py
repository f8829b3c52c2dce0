"""A tiny random NLI model in the layout Hugging Face Optimum exports, made in a test's folder.

The graph (built with onnx.helper, no torch): token embeddings plus token-type embeddings,
mean-pooled over the attention mask, then a linear layer to the label logits. The weights are
random from a fixed generator state, so the same folder is built every time; :func:`reference`
computes the same logits in numpy, to check the loader, the padding and the truncation. The
tokenizer is a lower-casing WordLevel tokenizer over whitespace words, pairing texts as BERT
does: ``[CLS] premise [SEP] claim [SEP]``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

_LINES = (
    "the patient was started on lisinopril metformin aspirin warfarin 5 50 10 mg daily twice",
    "left right knee pain fever cough no denies has had a of and with for in is takes culture",
    "grew e coli klebsiella blood pressure history hypertension diabetes type 2 chest x-ray",
    "clear pneumonia she he reports",
)
WORDS = tuple(word for line in _LINES for word in line.split())
SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]")
HIDDEN = 8
THREE_WAY = {"0": "ENTAILMENT", "1": "NEUTRAL", "2": "CONTRADICTION"}


def vocabulary() -> dict[str, int]:
    words = list(SPECIAL) + sorted(set(WORDS))
    return {word: index for index, word in enumerate(words)}


def weights(n_labels: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20240522)
    vocab = len(vocabulary())
    return {
        "word_embeddings": rng.normal(0, 1, (vocab, HIDDEN)).astype(np.float32),
        "type_embeddings": rng.normal(0, 1, (2, HIDDEN)).astype(np.float32),
        "classifier_w": rng.normal(0, 1, (HIDDEN, n_labels)).astype(np.float32),
        "classifier_b": rng.normal(0, 0.1, (n_labels,)).astype(np.float32),
    }


def _tokenizer_json(path: Path) -> None:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = vocabulary()
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tokenizer.save(str(path))


def _model_onnx(path: Path, n_labels: int) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = weights(n_labels)
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", n_labels])
    initializers = [numpy_helper.from_array(array, name) for name, array in w.items()]
    initializers += [
        numpy_helper.from_array(np.array([2], dtype=np.int64), "axis_2"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis_1"),
    ]
    nodes = [
        helper.make_node("Gather", ["word_embeddings", "input_ids"], ["words"]),
        helper.make_node("Gather", ["type_embeddings", "token_type_ids"], ["types"]),
        helper.make_node("Add", ["words", "types"], ["tokens"]),
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask", "axis_2"], ["mask3"]),
        helper.make_node("Mul", ["tokens", "mask3"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "axis_1"], ["summed"], keepdims=0),
        helper.make_node("ReduceSum", ["mask3", "axis_1"], ["count"], keepdims=0),
        helper.make_node("Div", ["summed", "count"], ["pooled"]),
        helper.make_node("MatMul", ["pooled", "classifier_w"], ["projected"]),
        helper.make_node("Add", ["projected", "classifier_b"], ["logits"]),
    ]
    graph = helper.make_graph(nodes, "tiny-nli", inputs, [output], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def build(
    folder: Path,
    *,
    id2label: dict[str, str] | None = None,
    max_length: int = 32,
    name: str = "tiny-random-nli",
) -> Path:
    """Write model.onnx, tokenizer.json, tokenizer_config.json and config.json to ``folder``."""
    labels = THREE_WAY if id2label is None else id2label
    folder.mkdir(parents=True, exist_ok=True)
    _model_onnx(folder / "model.onnx", len(labels))
    _tokenizer_json(folder / "tokenizer.json")
    config = {
        "_name_or_path": name,
        "model_type": "bert",
        "id2label": labels,
        "label2id": {label: int(index) for index, label in labels.items()},
        "max_position_embeddings": 512,
        "pad_token_id": 0,
    }
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"model_max_length": max_length}), encoding="utf-8"
    )
    return folder


def token_ids(text: str) -> list[int]:
    vocab = vocabulary()
    return [vocab.get(word, vocab["[UNK]"]) for word in text.lower().split()]


def reference(premise_ids: Sequence[int], claim_ids: Sequence[int], n_labels: int = 3) -> np.ndarray:
    """The model's logits for one pair of already truncated token lists, in numpy."""
    vocab = vocabulary()
    w = weights(n_labels)
    ids = [vocab["[CLS]"], *premise_ids, vocab["[SEP]"], *claim_ids, vocab["[SEP]"]]
    types = [0] * (len(premise_ids) + 2) + [1] * (len(claim_ids) + 1)
    tokens = w["word_embeddings"][ids] + w["type_embeddings"][types]
    pooled = tokens.mean(axis=0)
    return np.asarray(pooled @ w["classifier_w"] + w["classifier_b"], dtype=np.float64)


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max())
    return np.asarray(shifted / shifted.sum())
