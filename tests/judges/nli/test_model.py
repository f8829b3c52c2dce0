"""Loading a local NLI model: the ONNX path against a numpy reference, labels, batching,
truncation, and the errors a user can meet."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from tests.judges.nli import tiny

from clineval.errors import ConfigError
from clineval.judges.nli.model import (
    BATCH_SIZE,
    LabelLayout,
    OnnxEntailmentModel,
    Probabilities,
    label_layout,
    load_model,
    max_length,
)

PREMISE = "the patient was started on lisinopril 5 mg daily"
CLAIM = "the patient takes lisinopril"


def _copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def _expected(premise: str, claim: str, n_labels: int = 3) -> np.ndarray:
    return tiny.softmax(tiny.reference(tiny.token_ids(premise), tiny.token_ids(claim), n_labels))


def test_onnx_model_gives_the_reference_probabilities_and_describes_itself(tiny_model: Path) -> None:
    model = load_model(tiny_model)
    assert isinstance(model, OnnxEntailmentModel)
    [p] = model.predict([(PREMISE, CLAIM)])
    entailment, neutral, contradiction = _expected(PREMISE, CLAIM)  # ENTAILMENT, NEUTRAL, CONTRADICTION
    assert p.entailment == pytest.approx(entailment, abs=1e-5)
    assert p.neutral == pytest.approx(neutral, abs=1e-5)
    assert p.contradiction == pytest.approx(contradiction, abs=1e-5)
    assert p.entailment + (p.neutral or 0) + (p.contradiction or 0) == pytest.approx(1.0)
    described = model.describe()
    assert described["path"] == str(tiny_model)
    assert described["runtime"] == "onnxruntime" and described["file"] == "model.onnx"
    assert described["name"] == "tiny-random-nli" and described["max_length"] == 32
    assert described["labels"] == ["ENTAILMENT", "NEUTRAL", "CONTRADICTION"]
    assert described["label_layout"] == "three_way"
    assert isinstance(described["sha256"], str) and len(described["sha256"]) == 64
    assert model.count_tokens(["lisinopril 5 mg", ""]) == [3, 0]
    assert model.pair_overhead() == 3  # [CLS] premise [SEP] claim [SEP]


def test_batches_of_mixed_lengths_give_each_pair_its_own_answer(tiny_model: Path) -> None:
    """More pairs than a batch, of many lengths: padding never changes an answer, order is kept."""
    model = load_model(tiny_model)
    words = PREMISE.split()
    pairs = [
        (" ".join(words[: 1 + i % len(words)]), CLAIM if i % 2 else "no fever") for i in range(BATCH_SIZE + 5)
    ]
    together = model.predict(pairs)
    assert len(together) == len(pairs)
    for (premise, claim), probabilities in zip(pairs, together, strict=True):
        assert probabilities.entailment == pytest.approx(_expected(premise, claim)[0], abs=1e-5)
    assert model.predict([]) == []


def test_a_long_premise_is_truncated_to_the_models_length(tiny_model: Path) -> None:
    """Max length 32: 3 special tokens and a 4-word claim leave 25 premise tokens; the premise
    (the longer text) loses its tail."""
    model = load_model(tiny_model)
    premise = " ".join(["fever"] * 30 + ["cough"] * 10)  # 40 words
    [p] = model.predict([(premise, CLAIM)])
    kept = tiny.token_ids(premise)[:25]
    expected = tiny.softmax(tiny.reference(kept, tiny.token_ids(CLAIM)))
    assert p.entailment == pytest.approx(expected[0], abs=1e-5)
    assert p.contradiction == pytest.approx(expected[2], abs=1e-5)
    untruncated = tiny.softmax(tiny.reference(tiny.token_ids(premise), tiny.token_ids(CLAIM)))
    assert abs((p.contradiction or 0) - untruncated[2]) > 1e-3  # read whole, the answer would differ
    assert model.count_tokens([premise]) == [40]  # counted whole, though the model reads 25


@pytest.mark.parametrize(
    ("id2label", "kind", "entailment", "neutral", "contradiction"),
    [
        ({"0": "ENTAILMENT", "1": "NEUTRAL", "2": "CONTRADICTION"}, "three_way", 0, 1, 2),
        ({"0": "contradiction", "1": "entailment", "2": "neutral"}, "three_way", 1, 2, 0),
        ({"0": "SUPPORTS", "1": "REFUTES", "2": "NOT ENOUGH INFO"}, "three_way", 0, 2, 1),
        ({"0": "not_entailment", "1": "entailment"}, "two_way", 1, None, None),
        ({"0": "Supported", "1": "Not Supported"}, "two_way", 0, None, None),
        ({"0": "inconsistent", "1": "consistent"}, "two_way", 1, None, None),
        ({"0": "LABEL_0"}, "single_logit", 0, None, None),
    ],
)
def test_label_layouts(
    id2label: dict[str, str], kind: str, entailment: int, neutral: int | None, contradiction: int | None
) -> None:
    layout = label_layout({"id2label": id2label}, Path("m/config.json"))
    assert (layout.kind, layout.entailment, layout.neutral, layout.contradiction) == (
        kind,
        entailment,
        neutral,
        contradiction,
    )


def test_probabilities_of_each_layout_by_hand() -> None:
    three = LabelLayout(kind="three_way", labels=("c", "e", "n"), entailment=1, neutral=2, contradiction=0)
    # logits ln 1, ln 3, ln 4 -> probabilities 1/8, 3/8, 4/8
    [p] = three.probabilities(np.log(np.array([[1.0, 3.0, 4.0]])))
    assert (p.contradiction, p.entailment, p.neutral) == pytest.approx((0.125, 0.375, 0.5))
    assert not p.contradicted  # neutral is the most probable
    [q] = three.probabilities(np.log(np.array([[5.0, 2.0, 1.0]])))
    assert q.contradicted and q.contradiction == pytest.approx(0.625)
    two = LabelLayout(kind="two_way", labels=("no", "yes"), entailment=1)
    [r] = two.probabilities(np.array([[0.0, np.log(3.0)]]))
    assert r == Probabilities(entailment=pytest.approx(0.75))  # type: ignore[arg-type]
    assert not r.contradicted  # a two-way model never says contradicted
    one = LabelLayout(kind="single_logit", labels=("LABEL_0",), entailment=0)
    [s] = one.probabilities(np.array([[np.log(4.0)]]))  # sigmoid(ln 4) = 4/5
    assert s.entailment == pytest.approx(0.8) and s.contradiction is None


@pytest.mark.parametrize(
    ("id2label", "n_labels"),
    [({"0": "not supported", "1": "supported"}, 2), ({"0": "score"}, 1)],
)
def test_two_label_and_single_logit_onnx_models(
    tmp_path: Path, id2label: dict[str, str], n_labels: int
) -> None:
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    folder = tiny.build(tmp_path / "m", id2label=id2label)
    [p] = load_model(folder).predict([(PREMISE, CLAIM)])
    logits = tiny.reference(tiny.token_ids(PREMISE), tiny.token_ids(CLAIM), n_labels)
    expected = tiny.softmax(logits)[1] if n_labels == 2 else 1 / (1 + np.exp(-logits[0]))
    assert p.entailment == pytest.approx(expected, abs=1e-5)
    assert p.contradiction is None and p.neutral is None


@pytest.mark.parametrize(
    "config",
    [
        {"id2label": {"0": "LABEL_0", "1": "LABEL_1"}},
        {"id2label": {"0": "LABEL_0", "1": "LABEL_1", "2": "LABEL_2"}},
        {"id2label": {"0": "entailment", "1": "entailment", "2": "neutral"}},
        {"id2label": {"0": "a", "1": "b", "2": "c", "3": "d"}},
    ],
)
def test_an_unknown_label_layout_is_an_error_naming_the_file(config: dict[str, object]) -> None:
    with pytest.raises(
        ConfigError, match=r"^models/x/config\.json: id2label .* is not a layout clineval reads"
    ):
        label_layout(config, Path("models/x/config.json"))


def test_config_errors_name_the_file() -> None:
    where = Path("m/config.json")
    with pytest.raises(ConfigError, match=r"^m/config\.json: no id2label"):
        label_layout({"model_type": "bert"}, where)
    with pytest.raises(ConfigError, match=r"^m/config\.json: id2label must name the outputs 0 to 1"):
        label_layout({"id2label": {"0": "entailment", "2": "not_entailment"}}, where)
    # label2id alone is read the other way round
    assert label_layout({"label2id": {"entailment": 1, "not_entailment": 0}}, where).entailment == 1


def test_max_length_from_tokenizer_config_or_positions(tmp_path: Path) -> None:
    assert max_length(tmp_path, {"max_position_embeddings": 514, "model_type": "roberta"}) == 512
    assert max_length(tmp_path, {"max_position_embeddings": 512, "model_type": "deberta-v2"}) == 512
    assert max_length(tmp_path, {}) == 512
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 1e30}), encoding="utf-8")
    assert max_length(tmp_path, {"max_position_embeddings": 256}) == 256  # the sentinel means no limit
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 128}), encoding="utf-8")
    assert max_length(tmp_path, {"max_position_embeddings": 256}) == 128


def test_folder_errors_are_one_clear_line(tiny_model: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such folder"):
        load_model(tmp_path / "absent")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ConfigError, match=r"no model\.onnx and no transformers weights"):
        load_model(empty)
    no_tokenizer = _copy(tiny_model, tmp_path / "no-tokenizer")
    (no_tokenizer / "tokenizer.json").unlink()
    with pytest.raises(ConfigError, match=r"tokenizer\.json: missing"):
        load_model(no_tokenizer)
    no_config = _copy(tiny_model, tmp_path / "no-config")
    (no_config / "config.json").unlink()
    with pytest.raises(ConfigError, match=r"config\.json: missing"):
        load_model(no_config)
    mismatch = _copy(tiny_model, tmp_path / "mismatch")
    config = json.loads((mismatch / "config.json").read_text(encoding="utf-8"))
    config["id2label"] = {"0": "not_entailment", "1": "entailment"}  # the graph has 3 outputs
    (mismatch / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"model\.onnx: the model gives outputs of shape \(1, 3\).*2 label"):
        load_model(mismatch)
    broken = _copy(tiny_model, tmp_path / "broken")
    (broken / "model.onnx").write_bytes(b"not a model")
    with pytest.raises(ConfigError, match=r"model\.onnx: onnxruntime cannot load it"):
        load_model(broken)


def test_missing_onnxruntime_says_what_to_install(tiny_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime now raises ImportError
    with pytest.raises(
        ConfigError, match=r"needs onnxruntime, which is not installed: pip install 'clineval\[nli\]'"
    ):
        load_model(tiny_model)


@pytest.mark.skipif(importlib.util.find_spec("transformers") is not None, reason="transformers is installed")
def test_a_transformers_folder_without_transformers_says_what_to_install(tmp_path: Path) -> None:
    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"id2label": {"0": "entailment"}}), encoding="utf-8")
    (folder / "model.safetensors").write_bytes(b"")
    with pytest.raises(ConfigError, match=r"needs transformers and torch.*pip install transformers torch"):
        load_model(folder)


def test_the_pad_id_comes_from_the_tokenizer_file_else_the_config(tiny_model: Path, tmp_path: Path) -> None:
    """Padding is masked out, so the answers cannot show it: the id itself is checked."""
    assert load_model(tiny_model)._pad_id == 0  # type: ignore[attr-defined]  # config.json's pad_token_id
    folder = _copy(tiny_model, tmp_path / "padded")
    spec = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    spec["padding"] = {
        "strategy": "BatchLongest",
        "direction": "Right",
        "pad_to_multiple_of": None,
        "pad_id": 1,
        "pad_type_id": 0,
        "pad_token": "[UNK]",
    }
    (folder / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    model = load_model(folder)
    assert model._pad_id == 1  # type: ignore[attr-defined]
    [p] = model.predict([(PREMISE, CLAIM)])  # and the file's padding does not pad a single pair
    assert p.entailment == pytest.approx(_expected(PREMISE, CLAIM)[0], abs=1e-5)
