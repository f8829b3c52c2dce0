"""Records: the knowledge base, the seeded generator, files, and the eleven questions."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from clineval.environments.radbench.knowledge import SCENARIOS, scenarios_for
from clineval.environments.radbench.questions import question_leaks, questions_for
from clineval.environments.radbench.records import RecordBank, generate_records, load_records, save_records
from clineval.environments.radbench.vocab import PAIRS, TASKS
from clineval.errors import DatasetError

SAMPLE_VALUES = {
    "organ": "Liver",
    "organ_dim": "size",
    "organ_quant": "15.0 cm",
    "part": "right lobe",
    "symptom": "mass",
    "anomaly_dim": "diameter",
    "anomaly_quant": "3.2 cm",
    "disease": "Disease",
    "indicator": "Score",
    "indicator_value": "2",
    "age": 50,
    "sex": "female",
}


def test_every_pair_has_at_least_three_coherent_scenarios() -> None:
    for pair in PAIRS:
        assert len(scenarios_for(*pair)) >= 3, pair
    for scenario in SCENARIOS:
        assert (scenario.anatomy, scenario.modality) in PAIRS
        for quantity in (scenario.organ_quantity, scenario.anomaly_quantity):
            assert quantity.low < quantity.high, scenario.disease
        for template in (scenario.finding, scenario.impression, scenario.treatment):
            template.format(**SAMPLE_VALUES)  # every placeholder is a known field
        assert scenario.indicator_values and 0 <= scenario.female_share <= 1
        assert scenario.age[0] <= scenario.age[1]
    diseases = [(s.anatomy, s.modality, s.disease) for s in SCENARIOS]
    assert len(diseases) == len(set(diseases))


def test_generation_is_seeded_and_balanced() -> None:
    first = generate_records(66, seed=3)
    again = generate_records(66, seed=3)
    other = generate_records(66, seed=4)
    assert [r.model_dump() for r in first] == [r.model_dump() for r in again]
    assert [r.model_dump() for r in first] != [r.model_dump() for r in other]
    per_pair = Counter((r.anatomy, r.modality) for r in first)
    assert set(per_pair) == set(PAIRS) and set(per_pair.values()) == {3}
    # three records of a pair use its three scenarios once each
    for pair in PAIRS:
        diseases = {r.disease for r in first if (r.anatomy, r.modality) == pair}
        assert diseases == {s.disease for s in scenarios_for(*pair)}
    assert [r.id for r in first[:2]] == ["rb-0001", "rb-0002"]


def test_values_come_from_the_scenario() -> None:
    for record in generate_records(44, seed=1):
        scenario = next(
            s for s in scenarios_for(record.anatomy, record.modality) if s.disease == record.disease
        )
        assert record.anomaly.symptom == scenario.symptom == record.anomaly_biomarker.anomaly_object
        assert record.indicator.value in scenario.indicator_values
        number = float(record.organ_biomarker.organ_quant.replace(scenario.organ_quantity.unit, "").strip())
        assert scenario.organ_quantity.low - 0.5 <= number <= scenario.organ_quantity.high + 0.5
        low, high = scenario.age
        assert low <= int(record.information.age) <= high
        assert record.information.sex in ("Female", "Male")


def test_restricted_pairs() -> None:
    records = generate_records(6, seed=0, pairs=[("Chest", "X-ray")])
    assert {(r.anatomy, r.modality) for r in records} == {("Chest", "X-ray")}
    with pytest.raises(ValueError, match="not an anatomy-modality pair"):
        generate_records(1, seed=0, pairs=[("Chest", "Mammography")])


def test_eleven_questions_that_reveal_nothing() -> None:
    for record in generate_records(220, seed=7):
        pairs = questions_for(record, seed=7)
        assert list(pairs) == [t.key for t in TASKS]
        for key, pair in pairs.items():
            assert pair.record_id == record.id and pair.task == key
            assert question_leaks(record, pair.question) == [], (record.id, key, pair.question)
        assert record.organ_biomarker.organ_quant in pairs["0126"].answer
        assert record.anomaly_biomarker.anomaly_quant in pairs["0136"].answer
        assert record.disease in pairs["014"].answer
        assert record.indicator.name in pairs["01235678"].answer
        assert pairs["012356789"].answer == record.treatment
        assert "[Organ Mask]" in pairs["012"].answer and "[Anomaly Mask]" in pairs["013"].answer


def test_question_leaks_are_found() -> None:
    record = generate_records(1, seed=0, pairs=[("Chest", "X-ray")])[0]
    assert question_leaks(record, f"Is this {record.disease} on the chest radiograph?")


PUBLISHED = {
    "case-7": {
        "case": {
            "Information": {
                "Age": "42",
                "Sex": "Female",
                "Height": "165",
                "Weight": "68",
                "History": "Seasonal allergies",
                "Complaint": "Facial pain and congestion for two weeks",
            },
            "Anatomy": "Head and Neck",
            "Modality": "X-ray",
            "Anomaly": {"Part": "Maxillary sinuses", "Symptom": "Opacification"},
            "Disease": "Sinusitis",
            "OrganBiomarker": {
                "OrganObject": "Maxillary sinus",
                "OrganDim": "density",
                "OrganQuant": "+40 HU",
            },
            "AnomalyBiomarker": {
                "AnomalyObject": "Opacification",
                "AnomalyDim": "intensity",
                "AnomalyQuant": "80%",
            },
            "Indicator": {"Name": "Lund-Mackay Score", "Value": "8"},
            "Report": {"Finding": "Bilateral maxillary opacification.", "Impression": "Maxillary sinusitis."},
            "Treatment": "Antibiotics and saline irrigation.",
        },
        "QA": {"014": {"Q": "What disease is shown?", "A": "Sinusitis."}},
    }
}


def test_published_format_and_jsonl_round_trip(tmp_path: Path) -> None:
    published = tmp_path / "combined.json"
    published.write_text(json.dumps({**PUBLISHED, "case-8": PUBLISHED["case-7"]}), encoding="utf-8")
    bank = load_records(published)
    assert [r.id for r in bank.records] == ["case-7", "case-8"]
    assert bank.records[0].organ_biomarker.organ_quant == "+40 HU"
    assert bank.qa["case-7"]["014"].answer == "Sinusitis."
    out = tmp_path / "records.jsonl"
    save_records(out, bank)
    again = load_records(out)
    assert [r.model_dump() for r in again.records] == [r.model_dump() for r in bank.records]
    assert again.qa == bank.qa
    generated = RecordBank(records=generate_records(3, seed=0))
    save_records(out, generated)
    assert len(load_records(out).records) == 3


def test_file_errors_name_file_case_and_field(tmp_path: Path) -> None:
    broken = json.loads(json.dumps(PUBLISHED))
    del broken["case-7"]["case"]["OrganBiomarker"]["OrganQuant"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(
        DatasetError, match=r"bad.json: case case-7: field 'OrganBiomarker.OrganQuant': missing"
    ):
        load_records(path)
    wrong_task = json.loads(json.dumps(PUBLISHED))
    wrong_task["case-7"]["QA"] = {"0999": {"Q": "q", "A": "a"}}
    path.write_text(json.dumps(wrong_task), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"field 'QA.0999': not a task key"):
        load_records(path)
    lines = tmp_path / "bad.jsonl"
    lines.write_text('{"ID": "a", "Anatomy": "Chest"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad.jsonl: line 1 \(record a\): field 'Information': missing"):
        load_records(lines)
    with pytest.raises(DatasetError, match="records file not found"):
        load_records(tmp_path / "absent.json")
