"""Synthetic patient records: a seeded generator, and files in the published or our JSONL form.

``generate_records(n, seed=...)`` draws records round-robin over the 22 anatomy-modality
pairs (or the pairs given), each from one of the pair's disease scenarios
(:mod:`.knowledge`): demographics, history and complaint, the finding, an organ and an
anomaly biomarker with values in plausible ranges, an indicator, a report and a
treatment that agree with those values. It uses its own ``random.Random(seed)``: the
same seed always gives the same records. This is the default set (``n`` records; the
three scenarios of a pair come round once every 66 records).

``generate_record_set(per_pair, seed=...)`` is the larger combined set: ``per_pair``
records for every pair, each a *distinct* combination of the knowledge base's parts --
a scenario, its side (a scenario marked ``mirror`` also appears with left and right
swapped), one of its histories and one of its complaints -- spread evenly over the
pair's scenarios and sides. Every part of a combination comes from the same scenario, so
the record stays as coherent as the scenario itself. Its records differ from the default
set's (another draw), so the two are not mixed in one comparison.

Files:

* the published RadABench form, one JSON object ``{case_id: {"case": {record},
  "QA": {"012": {"Q": ..., "A": ...}, ...}}}`` with the published record keys
  (``Information``, ``Anatomy``, ..., ``Report.Finding``);
* our JSONL form, one record per line with the same keys plus ``"ID"`` and, optionally,
  ``"QA"`` in the same shape (what ``clineval radbench generate`` writes).
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clineval.environments.radbench.knowledge import Scenario, mirrored, scenarios_for
from clineval.environments.radbench.model import (
    Anomaly,
    AnomalyBiomarker,
    Indicator,
    OrganBiomarker,
    PatientInformation,
    QAPair,
    Record,
    Report,
)
from clineval.environments.radbench.vocab import PAIRS, TASKS_BY_KEY
from clineval.errors import DatasetError


class RecordBank(BaseModel):
    """Records, and the QA pairs a file gave for them (record id → task key → pair)."""

    model_config = ConfigDict(extra="forbid")

    records: list[Record]
    qa: dict[str, dict[str, QAPair]] = Field(default_factory=dict)


def _demographics(rng: random.Random, scenario: Scenario) -> tuple[int, str, int, int]:
    age = rng.randint(*scenario.age)
    sex = "Female" if rng.random() < scenario.female_share else "Male"
    if age < 18:
        height = round(min(185.0, 75 + 6.0 * age + rng.gauss(0, 5)))
        bmi = rng.gauss(18.0, 2.0)
    else:
        height = round(rng.gauss(163 if sex == "Female" else 177, 6.5))
        bmi = rng.gauss(25.0, 3.5)
    weight = round(max(12.0, bmi * (height / 100) ** 2))
    return age, sex, height, weight


def record_from(
    scenario: Scenario,
    rng: random.Random,
    record_id: str,
    *,
    history: str | None = None,
    complaint: str | None = None,
) -> Record:
    """One record drawn from a scenario (history and complaint drawn too unless given)."""
    age, sex, height, weight = _demographics(rng, scenario)
    values = {
        "organ": scenario.organ,
        "organ_dim": scenario.organ_dim,
        "organ_quant": scenario.organ_quantity.sample(rng),
        "part": scenario.part,
        "symptom": scenario.symptom,
        "anomaly_dim": scenario.anomaly_dim,
        "anomaly_quant": scenario.anomaly_quantity.sample(rng),
        "disease": scenario.disease,
        "indicator": scenario.indicator,
        "indicator_value": rng.choice(scenario.indicator_values),
        "age": age,
        "sex": sex.lower(),
    }
    return Record(
        id=record_id,
        information=PatientInformation(
            age=str(age),
            sex=sex,
            height=str(height),
            weight=str(weight),
            history=history if history is not None else rng.choice(scenario.histories),
            complaint=complaint if complaint is not None else rng.choice(scenario.complaints),
        ),
        anatomy=scenario.anatomy,
        modality=scenario.modality,
        anomaly=Anomaly(part=scenario.part, symptom=scenario.symptom),
        disease=scenario.disease,
        organ_biomarker=OrganBiomarker(
            organ_object=scenario.organ, organ_dim=scenario.organ_dim, organ_quant=str(values["organ_quant"])
        ),
        anomaly_biomarker=AnomalyBiomarker(
            anomaly_object=scenario.symptom,
            anomaly_dim=scenario.anomaly_dim,
            anomaly_quant=str(values["anomaly_quant"]),
        ),
        indicator=Indicator(name=scenario.indicator, value=str(values["indicator_value"])),
        report=Report(
            finding=scenario.finding.format(**values), impression=scenario.impression.format(**values)
        ),
        treatment=scenario.treatment.format(**values),
    )


def generate_records(n: int, *, seed: int, pairs: Sequence[tuple[str, str]] | None = None) -> list[Record]:
    """``n`` records, round-robin over the pairs, each pair cycling through its scenarios."""
    if n < 0:
        raise ValueError("n must be 0 or more")
    chosen = list(pairs) if pairs else list(PAIRS)
    unknown = [p for p in chosen if p not in PAIRS]
    if unknown:
        raise ValueError(f"not an anatomy-modality pair of the benchmark: {unknown[0]}")
    rng = random.Random(seed)
    cycles: dict[tuple[str, str], list[Scenario]] = {}
    records = []
    for i in range(n):
        pair = chosen[i % len(chosen)]
        if not cycles.get(pair):
            options = scenarios_for(*pair)
            if not options:
                raise ValueError(f"no scenario for {pair[0]} {pair[1]}")
            cycles[pair] = rng.sample(options, len(options))
        scenario = cycles[pair].pop()
        records.append(record_from(scenario, rng, f"rb-{i + 1:04d}"))
    return records


_Combination = tuple[Scenario, str, str]


def _combinations(pair: tuple[str, str], per_pair: int, rng: random.Random) -> list[_Combination]:
    """``per_pair`` distinct (scenario or its mirror, history, complaint) of one pair, even
    over the scenarios (and, within a scenario, over its sides)."""
    scenarios = scenarios_for(*pair)
    if not scenarios:
        raise ValueError(f"no scenario for {pair[0]} {pair[1]}")
    pools: list[list[list[_Combination]]] = []
    for scenario in rng.sample(scenarios, len(scenarios)):
        variants = [scenario, mirrored(scenario)] if scenario.mirror else [scenario]
        per_side: list[list[_Combination]] = []
        for variant in variants:
            combos = [(variant, h, c) for h, c in itertools.product(variant.histories, variant.complaints)]
            per_side.append(rng.sample(combos, len(combos)))
        pools.append(per_side)
    available = sum(len(p) for sides in pools for p in sides)
    if per_pair > available:
        raise ValueError(
            f"{pair[0]} {pair[1]} has {available} distinct combinations of its scenarios' parts, "
            f"fewer than {per_pair} records per pair; add scenarios, histories or complaints to its "
            "knowledge file"
        )
    chosen: list[_Combination] = []
    turn = 0
    while len(chosen) < per_pair:
        for sides in pools:
            if len(chosen) == per_pair:
                break
            for offset in range(len(sides)):  # alternate the sides of a mirrored scenario
                side = sides[(turn + offset) % len(sides)]
                if side:
                    chosen.append(side.pop())
                    break
        turn += 1
    return chosen


def generate_record_set(
    per_pair: int, *, seed: int, pairs: Sequence[tuple[str, str]] | None = None
) -> list[Record]:
    """``per_pair`` records for each pair, each a distinct combination of a scenario (or its
    mirror), a history and a complaint; ids ``rb-0001``..., round-robin over the pairs."""
    if per_pair < 1:
        raise ValueError("records per pair must be 1 or more")
    chosen = list(pairs) if pairs else list(PAIRS)
    unknown = [p for p in chosen if p not in PAIRS]
    if unknown:
        raise ValueError(f"not an anatomy-modality pair of the benchmark: {unknown[0]}")
    rng = random.Random(f"radbench-record-set/{seed}")
    plans = {pair: _combinations(pair, per_pair, rng) for pair in chosen}
    records: list[Record] = []
    for round_ in range(per_pair):
        for pair in chosen:
            scenario, history, complaint = plans[pair][round_]
            number = len(records) + 1
            records.append(
                record_from(scenario, rng, f"rb-{number:04d}", history=history, complaint=complaint)
            )
    return records


# files --------------------------------------------------------------------------------


def _problem(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err.get("loc", ()))
    kind = "missing" if err.get("type") == "missing" else str(err.get("msg", "invalid"))
    more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    return f"field '{loc}': {kind}{more}"


def _qa(path: Path, where: str, record_id: str, raw: Any) -> dict[str, QAPair]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise DatasetError(f"{path}: {where}: field 'QA': expected an object of task keys")
    pairs: dict[str, QAPair] = {}
    for key, item in raw.items():
        if key not in TASKS_BY_KEY:
            raise DatasetError(
                f"{path}: {where}: field 'QA.{key}': not a task key "
                f"(expected one of {', '.join(TASKS_BY_KEY)})"
            )
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("Q"), str)
            or not isinstance(item.get("A"), str)
        ):
            raise DatasetError(f'{path}: {where}: field \'QA.{key}\': expected {{"Q": text, "A": text}}')
        pairs[key] = QAPair(record_id=record_id, task=key, question=item["Q"], answer=item["A"])
    return pairs


def _record(path: Path, where: str, record_id: str, data: Any) -> Record:
    if not isinstance(data, dict):
        raise DatasetError(f"{path}: {where}: expected a record object")
    try:
        return Record.model_validate({**data, "ID": record_id})
    except ValidationError as exc:
        raise DatasetError(f"{path}: {where}: {_problem(exc)}") from None


def load_records(path: str | Path) -> RecordBank:
    """Records (and their QA pairs) from a published-form JSON file or our JSONL file."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(f"records file not found: {file}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{file}: cannot read: {exc}") from None
    records: list[Record] = []
    qa: dict[str, dict[str, QAPair]] = {}
    if file.suffix.lower() == ".jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            where = f"line {number}"
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{file}: {where}: not valid JSON: {exc.msg}") from None
            if not isinstance(data, dict) or not str(data.get("ID") or "").strip():
                raise DatasetError(f"{file}: {where}: field 'ID': a record needs an ID")
            record_id = str(data.pop("ID"))
            raw_qa = data.pop("QA", None)
            records.append(_record(file, f"{where} (record {record_id})", record_id, data))
            qa[record_id] = _qa(file, f"{where} (record {record_id})", record_id, raw_qa)
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{file}: not valid JSON: {exc.msg} (line {exc.lineno})") from None
        if not isinstance(data, dict):
            raise DatasetError(f'{file}: expected an object of cases {{case_id: {{"case": ..., "QA": ...}}}}')
        for case_id, entry in data.items():
            where = f"case {case_id}"
            if not isinstance(entry, dict) or "case" not in entry:
                raise DatasetError(
                    f'{file}: {where}: field \'case\': missing (expected {{"case": record, "QA": ...}})'
                )
            records.append(_record(file, where, str(case_id), entry["case"]))
            qa[str(case_id)] = _qa(file, where, str(case_id), entry.get("QA"))
    ids = [r.id for r in records]
    if len(set(ids)) != len(ids):
        duplicate = next(i for i in ids if ids.count(i) > 1)
        raise DatasetError(f"{file}: record id {duplicate!r} is used twice")
    if not records:
        raise DatasetError(f"{file}: no records")
    return RecordBank(records=records, qa={k: v for k, v in qa.items() if v})


def save_records(path: str | Path, bank: RecordBank) -> None:
    """Write records (and their QA pairs) as our JSONL form."""
    lines = []
    for record in bank.records:
        data = record.model_dump(mode="json", by_alias=True)
        data["ID"] = record.id
        pairs = bank.qa.get(record.id)
        if pairs:
            data["QA"] = {key: {"Q": p.question, "A": p.answer} for key, p in pairs.items()}
        lines.append(json.dumps(data, ensure_ascii=False))
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
