"""The offline judge's fitted decision: the model, its file, and what it decides."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from clineval.errors import ConfigError
from clineval.judges.offline import OfflinePrimitives
from clineval.judges.offline.decision import DecisionModel, Signals, load_decision, packaged_decision

ROOT = Path(__file__).resolve().parents[3]


def _signals(**values: float) -> Signals:
    base = dict.fromkeys(Signals.names(), 0.0)
    base.update(values)
    return Signals(**base)


def _model(**update: object) -> DecisionModel:
    data: dict[str, object] = {
        "version": "test",
        "features": ("support",),
        "mean": (0.5,),
        "scale": (0.25,),
        "coef": (2.0,),
        "intercept": 0.0,
        "entail_threshold": 0.6,
    }
    data.update(update)
    return DecisionModel.model_validate(data)


def test_probability_is_the_logistic_of_the_standardised_signals() -> None:
    model = _model()
    # z = 2 * (0.75 - 0.5) / 0.25 = 2
    assert model.probability(_signals(support=0.75)) == pytest.approx(1 / (1 + math.exp(-2)))
    assert model.probability(_signals(support=0.5)) == pytest.approx(0.5)
    # z = 2 * (0 - 0.5) / 0.25 = -4
    assert model.probability(_signals(support=0.0)) == pytest.approx(1 / (1 + math.exp(4)))


def test_labels_follow_the_threshold_the_unstated_term_rule_and_the_main_concept() -> None:
    model = _model()
    assert model.label(0.6, _signals()) == "entailed"
    assert model.label(0.99, _signals(strict_missing=0.2)) == "partial"  # an unstated clinical term
    assert model.label(0.59, _signals(rule_partial=1.0)) == "partial"  # the main concept is there
    assert model.label(0.59, _signals(rule_entailed=1.0)) == "partial"
    assert model.label(0.59, _signals()) == "not_entailed"
    assert model.label(0.01, _signals(rule_partial=1.0)) == "partial"


@pytest.mark.parametrize(
    ("update", "words"),
    [
        ({"coef": (1.0, 2.0)}, "same length"),
        ({"features": ("colour",), "mean": (0.0,), "scale": (1.0,), "coef": (1.0,)}, "unknown feature"),
        ({"entail_threshold": 1.5}, "less than or equal to 1"),
    ],
)
def test_an_inconsistent_model_is_refused(update: dict[str, object], words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        _model(**update)


def test_a_model_file_that_is_missing_or_wrong_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nowhere\.json: cannot read"):
        load_decision(tmp_path / "nowhere.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.json: not JSON"):
        load_decision(bad)
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"version": "x"}), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"wrong\.json: not a decision model"):
        load_decision(wrong)


def test_the_shipped_model_is_documented_as_it_is() -> None:
    model = packaged_decision()
    assert model is not None
    assert set(model.features) <= set(Signals.names())
    assert set(model.trained_on) == {"kqa", "radfact", "medec", "contrasts"}
    assert set(model.figures["leave_one_dataset_out"]) == {"kqa", "radfact", "medec", "contrasts"}
    doc = (ROOT / "docs" / "offline-judge.md").read_text(encoding="utf-8")
    for feature, coef in zip(model.features, model.coef, strict=True):
        row = re.search(rf"\| `{feature}` \|[^\n]*\| ([+−]\d\.\d\d) \|", doc)
        assert row is not None, feature
        assert float(row.group(1).replace("−", "-")) == pytest.approx(coef, abs=0.005), feature
    assert f"At {model.entail_threshold:.2f} or more the claim is `entailed`" in doc


def test_the_fitted_decision_labels_and_grades_what_no_check_decides() -> None:
    evidence = "Lisinopril 10 mg daily was started for hypertension."
    fitted, rules = OfflinePrimitives(), OfflinePrimitives(decision=None)
    [paraphrase] = fitted.check_facts_sync(
        ["She was started on lisinopril for high blood pressure."], evidence
    )
    assert paraphrase.label == "entailed" and paraphrase.explanation.startswith(
        "fitted decision: P(entailed)"
    )
    assert paraphrase.support is not None and 0.5 <= paraphrase.support <= 1.0
    [by_rules] = rules.check_facts_sync(["She was started on lisinopril for high blood pressure."], evidence)
    assert by_rules.explanation.startswith("coverage check")
    # a conflict still decides by itself, with support 0
    [swap] = fitted.check_facts_sync(["Lisinopril 20 mg daily was started for hypertension."], evidence)
    assert (swap.label, swap.reason, swap.support) == ("not_entailed", "incorrect", 0.0)
    assert fitted.describe()["decision"]["version"] == packaged_decision().version  # type: ignore[union-attr]
