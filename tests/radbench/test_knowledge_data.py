"""The knowledge base as data files (loader, errors, mirroring), the larger combined record
set, the clinical coherence of every record, and the default records staying exactly what
they were before the move out of Python (snapshots taken from the Python knowledge base)."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from clineval.environments.radbench.knowledge import (
    SCENARIOS,
    Scenario,
    knowledge_dir,
    load_knowledge,
    mirrored,
    scenarios_for,
)
from clineval.environments.radbench.model import Record
from clineval.environments.radbench.records import generate_record_set, generate_records
from clineval.environments.radbench.runner import BenchSettings
from clineval.environments.radbench.vocab import PAIRS
from clineval.errors import DatasetError

DATA = Path(__file__).parent / "data"


def _dump(records: list[Record]) -> list[dict[str, object]]:
    return [dict(r.model_dump(mode="json", by_alias=True), ID=r.id) for r in records]


def test_default_66_records_are_unchanged() -> None:
    lines = (DATA / "default_records_66_seed0.jsonl").read_text("utf-8").splitlines()
    expected = [json.loads(line) for line in lines]
    assert _dump(generate_records(66, seed=0)) == expected


def test_default_record_sets_are_unchanged() -> None:
    digests = json.loads((DATA / "default_records_digests.json").read_text("utf-8"))
    for key, digest in digests.items():
        n, seed = (int(x) for x in key.split("/"))
        text = json.dumps(_dump(generate_records(n, seed=seed)), ensure_ascii=False, sort_keys=True)
        assert hashlib.sha256(text.encode()).hexdigest() == digest, key


# --------------------------------------------------------------------------- the data files


def test_the_knowledge_base_is_data_files_one_per_region() -> None:
    files = sorted(p.name for p in knowledge_dir().glob("*.yaml"))
    assert files == [
        "abdomen_pelvis.yaml",
        "breast.yaml",
        "chest.yaml",
        "head_neck.yaml",
        "limb.yaml",
        "spine.yaml",
    ]
    assert len(SCENARIOS) == 66
    assert not list(Path(knowledge_dir()).parent.parent.glob("knowledge/*.py"))  # no Python left
    assert sum(s.mirror for s in SCENARIOS) == 28


def test_the_package_data_is_in_the_wheel() -> None:
    """Hatch puts every file under src/clineval in the wheel unless git ignores it."""
    root = Path(__file__).resolve().parents[2]
    pyproject = (root / "pyproject.toml").read_text("utf-8")
    assert 'packages = ["src/clineval"]' in pyproject
    ignored = (root / ".gitignore").read_text("utf-8") if (root / ".gitignore").exists() else ""
    assert not re.search(r"^\*?\.?ya?ml|^data/?$|knowledge", ignored, re.MULTILINE)


def _write(tmp: Path, text: str, name: str = "chest.yaml") -> Path:
    folder = tmp / "kb"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder


def _entry(**changes: object) -> str:
    """One valid chest X-ray scenario as YAML, with fields changed (None removes one)."""
    fields: dict[str, object] = {
        "modality": "X-ray",
        "disease": "Lobar pneumonia",
        "part": "right lower lobe",
        "symptom": "consolidation",
        "organ": "heart",
        "organ_dim": "cardiothoracic ratio",
        "organ_quantity": "{low: 0.4, high: 0.49, unit: '', decimals: 2}",
        "anomaly_dim": "extent",
        "anomaly_quantity": "{low: 5, high: 11, unit: cm}",
        "indicator": "CURB-65 Score",
        "indicator_values": "['1', '2']",
        "finding": "'{symptom} in the {part}'",
        "impression": "Pneumonia",
        "treatment": "Antibiotics",
        "age": "[30, 85]",
        "female_share": "0.5",
        "histories": "[COPD]",
        "complaints": "[Cough]",
    }
    fields.update(changes)
    lines = [f"  {k}: {v}" for k, v in fields.items() if v is not None]
    lines[0] = "-" + lines[0][1:]
    return "\n".join(lines) + "\n"


def test_a_valid_file_loads(tmp_path: Path) -> None:
    scenarios = load_knowledge(_write(tmp_path, "anatomy: Chest\nscenarios:\n" + _entry()))
    assert [s.disease for s in scenarios] == ["Lobar pneumonia"]
    assert scenarios[0].organ_quantity.low == 0.4 and scenarios[0].anomaly_quantity.decimals == 1


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        # line 3 is the entry's first line, fields follow in the order of _entry
        (_entry(organ_quantity="{low: 0.5, high: 0.4, unit: ''}"), r":9: .*field 'organ_quantity': .*low"),
        (_entry(anomaly_quantity="{low: five, high: 11}"), r":11: .*'anomaly_quantity.low': .*number"),
        (_entry(finding="'{symptom} at {site}'"), r":14: .*'finding': unknown placeholder \{site\}"),
        (_entry(treatment=None), r":3: scenario 1 \(Lobar pneumonia\): field 'treatment': missing"),
        (_entry(colour="red"), r":21: .*field 'colour': not a field"),
        (
            _entry(modality="Mammography"),
            r":3: .*field 'modality': Chest Mammography is not an anatomy-modality pair",
        ),
        (_entry(age="[60, 20]"), r":17: .*field 'age': expected \[youngest, oldest\]"),
        (_entry(female_share="1.5"), r":18: .*'female_share': .*less than or equal to 1"),
        (_entry(indicator_values="[]"), r":13: .*'indicator_values'"),
    ],
)
def test_a_bad_entry_names_file_line_and_field(tmp_path: Path, entry: str, expected: str) -> None:
    folder = _write(tmp_path, "anatomy: Chest\nscenarios:\n" + entry)
    with pytest.raises(DatasetError, match=r"chest\.yaml" + expected):
        load_knowledge(folder)


def test_file_level_problems_are_clear(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"chest\.yaml:3: not valid YAML"):
        load_knowledge(_write(tmp_path, "anatomy: Chest\nscenarios: [\n"))
    with pytest.raises(DatasetError, match=r"field 'scenarios': missing"):
        load_knowledge(_write(tmp_path, "anatomy: Chest\n"))
    with pytest.raises(DatasetError, match=r"no knowledge files"):
        load_knowledge(tmp_path / "empty")
    twice = "anatomy: Chest\nscenarios:\n" + _entry() + _entry()
    with pytest.raises(DatasetError, match=r"Lobar pneumonia \(Chest X-ray\) is also in chest\.yaml"):
        load_knowledge(_write(tmp_path, twice))


def test_mirroring_swaps_every_side_and_back() -> None:
    for scenario in SCENARIOS:
        if not scenario.mirror:
            with pytest.raises(ValueError, match="not marked mirror"):
                mirrored(scenario)
            continue
        other = mirrored(scenario)
        assert mirrored(other) == scenario
        assert other.disease == scenario.disease
        texts = ("part", "symptom", "finding", "impression")
        assert any(getattr(other, t) != getattr(scenario, t) for t in texts), scenario.disease
        if _sides(scenario.part):
            assert _sides(other.part) == {_OTHER[s] for s in _sides(scenario.part)}, scenario.disease
    pneumothorax = next(s for s in SCENARIOS if s.disease == "Pneumothorax")
    swapped = mirrored(pneumothorax)
    assert swapped.part == "left pleural space" and swapped.organ == "left lung"
    assert "Sudden left-sided chest pain at rest" in swapped.complaints
    assert "Right-sided pneumothorax treated with aspiration three years ago" in swapped.histories


# --------------------------------------------------------------------------- the larger set


def test_records_per_pair_gives_distinct_balanced_records() -> None:
    records = generate_record_set(10, seed=0)
    assert len(records) == 220
    assert [r.id for r in records[:3]] == ["rb-0001", "rb-0002", "rb-0003"]
    assert Counter((r.anatomy, r.modality) for r in records) == dict.fromkeys(PAIRS, 10)
    identity = {
        (r.anatomy, r.modality, r.disease, r.anomaly.part, r.information.history, r.information.complaint)
        for r in records
    }
    assert len(identity) == 220  # no two records are the same combination
    for pair in PAIRS:  # even over the pair's scenarios: 10 = 4 + 3 + 3
        counts = Counter(r.disease for r in records if (r.anatomy, r.modality) == pair)
        assert len(counts) == len(scenarios_for(*pair)) and max(counts.values()) - min(counts.values()) <= 1
    breast = Counter(r.anomaly.part for r in records if r.disease == "Invasive lobular carcinoma")
    assert set(breast) == {
        "upper outer quadrant of the right breast",
        "upper outer quadrant of the left breast",
    }
    assert sorted(breast.values()) in ([1, 2], [2, 2], [1, 1])
    assert [r.model_dump() for r in generate_record_set(10, seed=0)] == [r.model_dump() for r in records]
    assert [r.model_dump() for r in generate_record_set(10, seed=1)] != [r.model_dump() for r in records]


def test_records_per_pair_beyond_the_combinations_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"Spine X-ray has 27 distinct combinations .* fewer than 28"):
        generate_record_set(28, seed=0, pairs=[("Spine", "X-ray")])
    with pytest.raises(ValueError, match="1 or more"):
        generate_record_set(0, seed=0)


def test_settings_offer_records_per_pair_and_keep_the_default() -> None:
    assert BenchSettings().records_per_pair is None and BenchSettings().n_records == 10
    assert BenchSettings(records_per_pair=10).records_per_pair == 10
    with pytest.raises(ValueError, match="cannot be used with a records file"):
        BenchSettings(records_per_pair=10, records_file="x.jsonl")


# --------------------------------------------------------------------------- clinical coherence

_OTHER = {"right": "left", "left": "right"}


def _sides(text: str) -> set[str]:
    return {m.lower() for m in re.findall(r"(?i)\b(right|left)\b", text)}


#: Words that only one modality's report uses; a record of another modality must not use them.
_MODALITY_TERMS = {
    "ultrasound": r"(?i)hypoechoic|hyperechoic|anechoic|isoechoic|acoustic shadowing|doppler|b-lines"
    r"|echo-free",
    "mri": r"\bT1\b|\bT2\b|T1-|T2-|\bSTIR\b|\bFLAIR\b|(?i:diffusion restriction|gadolinium|signal intensity)",
    "ct": r"(?i)hounsfield|\bHU\b",
    "radiograph": r"(?i)radiograph",
    "mammogram": r"(?i)mammogra",
}
_MODALITY_ALLOWS = {
    "X-ray": {"radiograph"},
    "CT": {"ct"},
    "MRI": {"mri"},
    "Ultrasound": {"ultrasound"},
    "Mammography": {"mammogram", "radiograph"},
}
#: Where the finding is (part and organ) must be in the record's region ...
_REGION = {
    "Head and Neck": r"brain|cerebr|sinus|thyroid|parotid|laryn|vocal|mandib|carotid|auditory|temporal lobe"
    r"|basal ganglia|nasophar|white matter|ventric",
    "Chest": r"lung|pleura|heart|cardiac|mediastin|pulmonary|thora|lobe|ventric|septum|pericard|subclavian"
    r"|hemidiaphragm|apex",
    "Breast": r"breast|nipple|axilla",
    "Abdomen and Pelvis": r"abdom|kidney|renal|liver|hepat|bowel|gallbladder|pancrea|\buter|prostat|adnex"
    r"|ovar|pararenal|subdiaphragmatic|quadrant|bladder|myometri|peritone|diaphragm|colon|append",
    "Limb": r"femor|tibi|radi|knee|ankle|tendon|ligament|subtalar|supraspinatus|achilles|carpal|nerve|vein"
    r"|popliteal|wrist|humer|shoulder|metaphys|diaphys|talus|calcane|patell|fibul",
    "Spine": r"\b[CTLS]\d|vertebra|spin|disc|odontoid|thecal|cord|lumbar|cervical|thoracic",
}
#: ... and never in another region's own organs.
_REGION_ONLY = {
    "Breast": r"breast|nipple",
    "Abdomen and Pelvis": r"kidney|liver|prostat|\buter|ovar|gallbladder|pancrea|bowel",
    "Spine": r"vertebra|odontoid",
    "Head and Neck": r"brain|thyroid|parotid|laryn|sinus",
}
#: A disease (by a word of its name) needs a finding that shows it.
_DIAGNOSIS_NEEDS = [
    (r"fracture", r"fracture"),
    (
        r"carcinoma|cancer|tumou?r|sarcoma|glioblastoma|schwannoma|adenoma|metasta|osteoma|thymoma",
        r"mass|nodule|lesion|tumou?r|thickening|calcification|nidus|enhanc|ulcerat|destruct",
    ),
    (r"pneumonia", r"consolidation"),
    (r"effusion", r"effusion|fluid"),
    (r"stenosis", r"stenosis|narrowing|plaque"),
    (r"pneumothorax", r"pleural line|pneumothorax"),
    (r"sinusitis", r"mucosal|fluid|opacif"),
    (r"hemorrhage|haemorrhage", r"hyperdense|haematoma|hematoma|hemorrhage|blood"),
    (r"thrombosis|embolism", r"thromb|filling defect|clot|non-?compressible"),
    (r"calculus|stone", r"calcul|stone"),
    (r"tear|rupture", r"tear|rupture|discontinu|gap"),
    (r"obstruction", r"dilat|air-fluid"),
    (r"herniation", r"herniat|extrusion|protrusion"),
]
#: A deficit from a brain or carotid lesion (other side), or a complaint about another region.
_SIDE_EXEMPT = r"(?i)weak|droop|numb|tingl|\bcalf\b|\bleg\b|\barm\b|\bhand\b"


def _incoherences(record: Record) -> list[str]:
    problems = []
    report = f"{record.report.finding} {record.report.impression}"
    for name, pattern in _MODALITY_TERMS.items():
        if name not in _MODALITY_ALLOWS[record.modality] and re.search(pattern, report):
            problems.append(f"a {record.modality} report uses {name} terms")
    where = f"{record.anomaly.part} {record.organ_biomarker.organ_object}"
    if not re.search(_REGION[record.anatomy], where, re.IGNORECASE):
        problems.append(f"{where!r} is not in the {record.anatomy} region")
    for region, pattern in _REGION_ONLY.items():
        if region != record.anatomy and re.search(pattern, f"{where} {record.disease}", re.IGNORECASE):
            problems.append(f"{where!r} belongs to {region}, not {record.anatomy}")
    side = _sides(record.anomaly.part)
    if len(side) == 1:
        if _sides(record.report.impression) - side:
            problems.append(f"impression names the other side: {record.report.impression}")
        complaint = record.information.complaint
        if _sides(complaint) and _sides(complaint) != side and not re.search(_SIDE_EXEMPT, complaint):
            problems.append(f"complaint on the other side: {complaint}")
    for disease, finding in _DIAGNOSIS_NEEDS:
        if re.search(disease, record.disease, re.IGNORECASE) and not re.search(
            finding, f"{record.anomaly.symptom} {report}", re.IGNORECASE
        ):
            problems.append(f"{record.disease}: no finding that shows it")
    text = f"{record.disease} {where}".lower()
    if re.search(r"prostat", text) and record.information.sex != "Male":
        problems.append("prostate disease in a woman")
    if re.search(r"\buter|ovar|adnex", text) and record.information.sex != "Female":
        problems.append("uterine or ovarian disease in a man")
    return problems


def _scenario_of(record: Record) -> Scenario:
    return next(
        s
        for s in SCENARIOS
        if (s.anatomy, s.modality, s.disease) == (record.anatomy, record.modality, record.disease)
    )


@pytest.mark.parametrize("source", ["default 66", "10 per pair", "13 per pair, seed 5"])
def test_every_record_is_clinically_coherent(source: str) -> None:
    records = {
        "default 66": lambda: generate_records(66, seed=0),
        "10 per pair": lambda: generate_record_set(10, seed=0),
        "13 per pair, seed 5": lambda: generate_record_set(13, seed=5),
    }[source]()
    problems = [
        f"{r.id} {r.anatomy} {r.modality} {r.disease}: {p}" for r in records for p in _incoherences(r)
    ]
    assert problems == []
    for record in records:
        scenario = _scenario_of(record)
        assert record.indicator.value in [
            v
            for s in (scenario, *([mirrored(scenario)] if scenario.mirror else []))
            for v in s.indicator_values
        ]
        low, high = scenario.age
        assert low <= int(record.information.age) <= high
        number = float(re.match(r"-?[\d.]+", record.anomaly_biomarker.anomaly_quant).group(0))
        assert scenario.anomaly_quantity.low - 0.05 <= number <= scenario.anomaly_quantity.high + 0.05


def test_the_coherence_checks_bite() -> None:
    """Each check finds the incoherence it is for (and most diseases are covered by one)."""
    good = generate_records(66, seed=0)
    pneumonia = next(r for r in good if r.disease == "Lobar pneumonia")
    assert _incoherences(pneumonia) == []
    swapped_side = pneumonia.model_copy(
        update={"report": pneumonia.report.model_copy(update={"impression": "Left lower lobe pneumonia."})}
    )
    assert any("other side" in p for p in _incoherences(swapped_side))
    wrong_modality = pneumonia.model_copy(
        update={"report": pneumonia.report.model_copy(update={"finding": "A hypoechoic consolidation."})}
    )
    assert any("ultrasound terms" in p for p in _incoherences(wrong_modality))
    wrong_region = pneumonia.model_copy(update={"anatomy": "Spine"})
    assert any("not in the Spine region" in p for p in _incoherences(wrong_region))
    unsupported = pneumonia.model_copy(update={"disease": "Femoral fracture"})
    assert any("no finding that shows it" in p for p in _incoherences(unsupported))
    covered = {
        s.disease for s in SCENARIOS if any(re.search(d, s.disease, re.I) for d, _ in _DIAGNOSIS_NEEDS)
    }
    assert len(covered) >= 40
