"""The human-labelled sets a judge is calibrated on, read into one shape each.

Two sources give the same records:

* the public data sets themselves, in the layout of their original releases (a folder with
  ``kqa/``, ``medec/``, ``radfact/``, ``medsafetybench/``), for the full validation
  (``validation/run_validation.py``);
* small samples of them shipped inside the package (``clineval/calibration/samples``, with
  the sets' licences and attribution), so that ``clineval calibrate`` runs anywhere with no
  download.

The sets (see ``samples/README.md`` for licences):

``kqa_nli``
    K-QA (Manes et al., 2024; MIT): (LLM answer to a real patient question, physician-written
    statement) pairs, each labelled Entailment / Neutral / Contradiction by three physicians.
``medec``
    MEDEC (Ben Abacha et al., 2024; CC BY 4.0): clinical texts with one expert-inserted
    medical error (its type, the erroneous sentence and the corrected text), and, where the
    set has one, the *clean sibling*: the same case written without the error, with the
    affected sentence reworded or moved by the set's authors.
``radfact``
    RadFact examples (Bannur et al., 2024; MIT): pairs of radiology reports split into
    phrases, each phrase labelled entailment / neutral / contradiction against the other
    report.
``refusal``
    MedSafetyBench (Han et al., 2024; MIT) harmful medical requests with a model-written safe
    refusal (should refuse), and K-QA patient questions with a physician's answer (should
    answer).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from clineval.errors import ConfigError

__all__ = [
    "SAMPLES",
    "CalibrationData",
    "KqaPair",
    "MedecText",
    "RadfactPair",
    "RefusalItem",
    "load_data",
    "load_samples",
]

SAMPLES = Path(__file__).resolve().parent / "samples"
KQA_LABELS = ("Entailment", "Neutral", "Contradiction")
RADFACT_LABELS = ("entailment", "neutral", "contradiction")


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class KqaPair(_Record):
    id: str
    question: str
    answer: str
    claim: str
    labels: tuple[str, str, str]
    """The three physicians' labels (Entailment, Neutral, Contradiction)."""
    majority: str


class MedecText(_Record):
    id: str
    text: str
    """The text with the inserted error."""
    corrected_text: str
    error_type: str
    error_sentence: str
    corrected_sentence: str
    sibling_id: str | None = None
    sibling_text: str | None = None
    """The same case written without the error by the set's authors (reworded), if any."""


class RadfactPair(_Record):
    id: str
    phrases_a: tuple[str, ...]
    phrases_b: tuple[str, ...]
    status_a: tuple[str, ...]
    """Label of each phrase of A against report B (entailment, neutral, contradiction)."""
    status_b: tuple[str, ...]


class RefusalItem(_Record):
    id: str
    request: str
    response: str
    should_refuse: bool
    source: Literal["medsafetybench", "kqa"]
    category: str = ""


class CalibrationData(BaseModel):
    """Every set, as records; ``source`` says where they were read from."""

    model_config = ConfigDict(extra="forbid")

    source: str
    kqa_nli: list[KqaPair] = Field(default_factory=list)
    medec: list[MedecText] = Field(default_factory=list)
    radfact: list[RadfactPair] = Field(default_factory=list)
    refusal: list[RefusalItem] = Field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {
            "kqa_nli": len(self.kqa_nli),
            "medec": len(self.medec),
            "radfact": len(self.radfact),
            "refusal": len(self.refusal),
        }


# --- reading the original releases --------------------------------------------------------


def _csv(path: Path) -> list[dict[str, str]]:
    csv.field_size_limit(10**8)
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            return list(csv.DictReader(handle))
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None


def _jsonl(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    out = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
    return out


def _require(row: dict[str, Any], keys: Sequence[str], where: str) -> None:
    missing = [k for k in keys if k not in row]
    if missing:
        raise ConfigError(f"{where}: missing column(s) {', '.join(missing)}")


def read_kqa_nli(folder: Path) -> list[KqaPair]:
    path = folder / "kqa" / "NLI_medical_annotator.csv"
    rows = _csv(path)
    out = []
    for number, row in enumerate(rows, start=2):
        _require(
            row,
            ("Question", "answer", "claim", "majority_label", "label_0", "label_1", "label_2"),
            f"{path}:{number}",
        )
        labels = (row["label_0"], row["label_1"], row["label_2"])
        for label in (*labels, row["majority_label"]):
            if label not in KQA_LABELS:
                raise ConfigError(f"{path}:{number}: label {label!r} is not one of {', '.join(KQA_LABELS)}")
        out.append(
            KqaPair(
                id=f"kqa-nli-{number - 2}",
                question=row["Question"],
                answer=row["answer"],
                claim=row["claim"],
                labels=labels,
                majority=row["majority_label"],
            )
        )
    return out


def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z0-9]+", text.lower()))


def read_medec(folder: Path) -> list[MedecText]:
    """Texts with an error, each paired with its clean sibling where the set has one (the
    clean text of the same case: over 80% of its distinct words shared with the corrected
    text)."""
    path = folder / "medec" / "MEDEC-MS-ValidationSet-with-GroundTruth-and-ErrorType.csv"
    rows = _csv(path)
    for number, row in enumerate(rows, start=2):
        _require(
            row,
            (
                "Text ID",
                "Text",
                "Error Flag",
                "Error Type",
                "Error Sentence",
                "Corrected Sentence",
                "Corrected Text",
            ),
            f"{path}:{number}",
        )
    clean = [(row, _words(row["Text"])) for row in rows if row["Error Flag"].strip() == "0"]
    out = []
    for row in rows:
        if row["Error Flag"].strip() != "1" or not row["Corrected Text"].strip():
            continue
        target = _words(row["Corrected Text"])
        sibling: dict[str, str] | None = None
        best = 0.0
        for candidate, words in clean:
            overlap = len(words & target) / max(1, len(words | target))
            if overlap > best:
                best, sibling = overlap, candidate
        if best <= 0.8:
            sibling = None
        out.append(
            MedecText(
                id=row["Text ID"],
                text=row["Text"],
                corrected_text=row["Corrected Text"],
                error_type=row["Error Type"],
                error_sentence=row["Error Sentence"],
                corrected_sentence=row["Corrected Sentence"],
                sibling_id=sibling["Text ID"] if sibling else None,
                sibling_text=sibling["Text"] if sibling else None,
            )
        )
    return out


def read_radfact(folder: Path) -> list[RadfactPair]:
    path = folder / "radfact" / "test_examples.json"
    try:
        examples = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc.msg})") from None
    out = []
    for index, item in enumerate(examples):
        try:
            a = tuple(item["input"]["phrases_A"])
            b = tuple(item["input"]["phrases_B"])
            sa = tuple(p["status"] for p in item["output"]["phrases_A_evidenced"])
            sb = tuple(p["status"] for p in item["output"]["phrases_B_evidenced"])
        except (KeyError, TypeError) as exc:
            raise ConfigError(f"{path}: example {index}: missing field {exc}") from None
        if len(a) != len(sa) or len(b) != len(sb):
            raise ConfigError(f"{path}: example {index}: phrases and labels differ in number")
        out.append(RadfactPair(id=f"radfact-{index}", phrases_a=a, phrases_b=b, status_a=sa, status_b=sb))
    return out


def read_refusal(folder: Path) -> list[RefusalItem]:
    out: list[RefusalItem] = []
    paths = sorted((folder / "medsafetybench").glob("gpt4_category_*.csv"))
    if not paths:
        raise ConfigError(f"no MedSafetyBench files (gpt4_category_*.csv) in {folder / 'medsafetybench'}")
    for path in paths:
        category = path.stem.rsplit("_", 1)[-1]
        for number, row in enumerate(_csv(path), start=2):
            _require(row, ("harmful_medical_request", "safe_response"), f"{path}:{number}")
            out.append(
                RefusalItem(
                    id=f"msb-{category}-{number - 2}",
                    request=row["harmful_medical_request"],
                    response=row["safe_response"],
                    should_refuse=True,
                    source="medsafetybench",
                    category=category,
                )
            )
    answers = folder / "kqa" / "questions_w_answers.jsonl"
    for index, row in enumerate(_jsonl(answers)):
        _require(row, ("Question", "Free_form_answer"), f"{answers}:{index + 1}")
        out.append(
            RefusalItem(
                id=f"kqa-{index}",
                request=row["Question"],
                response=row["Free_form_answer"],
                should_refuse=False,
                source="kqa",
            )
        )
    return out


def load_data(folder: str | Path) -> CalibrationData:
    """Every set from a folder laid out like the original releases (see the module docstring)."""
    root = Path(folder)
    if not root.is_dir():
        raise ConfigError(f"no data folder at {root}")
    return CalibrationData(
        source=str(root),
        kqa_nli=read_kqa_nli(root),
        medec=read_medec(root),
        radfact=read_radfact(root),
        refusal=read_refusal(root),
    )


# --- the packaged samples -----------------------------------------------------------------

_SAMPLE_FILES: dict[str, type[_Record]] = {
    "kqa_nli": KqaPair,
    "medec": MedecText,
    "radfact": RadfactPair,
    "refusal": RefusalItem,
}


def load_samples(folder: str | Path | None = None) -> CalibrationData:
    """The samples shipped with the package (or written by :func:`write_samples` to ``folder``)."""
    root = Path(folder) if folder is not None else SAMPLES
    sets: dict[str, list[Any]] = {}
    for name, model in _SAMPLE_FILES.items():
        path = root / f"{name}.jsonl"
        records = []
        for number, row in enumerate(_jsonl(path), start=1):
            try:
                records.append(model.model_validate(row))
            except Exception as exc:
                raise ConfigError(f"{path}:{number}: {exc}") from None
        sets[name] = records
    return CalibrationData(source=f"samples ({root})", **sets)


def write_samples(data: CalibrationData, folder: str | Path) -> Path:
    """Write ``data`` as the sample files :func:`load_samples` reads."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    for name in _SAMPLE_FILES:
        records: Iterable[BaseModel] = getattr(data, name)
        with (root / f"{name}.jsonl").open("w", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record.model_dump(mode="json"), ensure_ascii=False) + "\n")
    return root


def _order(key: str) -> str:
    import hashlib

    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def select_samples(
    data: CalibrationData,
    *,
    kqa_pairs: int = 120,
    kqa_contradictions: int = 4,
    medec_per_type: int = 10,
    refusal_per_category: int = 5,
    radfact: int | None = None,
) -> CalibrationData:
    """A small, deterministic, stratified subset of ``data`` (what the package ships).

    K-QA: whole answers (all their statements), taken in a fixed pseudo-random order, first
    until ``kqa_contradictions`` statements the physicians' majority calls a contradiction
    are in, then until ``kqa_pairs`` statements; MEDEC: ``medec_per_type`` texts per error
    type, those with a clean sibling first; refusal: ``refusal_per_category`` requests per
    MedSafetyBench category and as many K-QA answers; RadFact: every pair (or ``radfact``).
    """
    by_answer: dict[str, list[KqaPair]] = {}
    for pair in data.kqa_nli:
        by_answer.setdefault(pair.answer, []).append(pair)
    answers = sorted(by_answer, key=_order)
    chosen: list[str] = []
    contradictions = 0
    for answer in answers:
        if contradictions >= kqa_contradictions:
            break
        found = sum(p.majority == "Contradiction" for p in by_answer[answer])
        if found:
            chosen.append(answer)
            contradictions += found
    for answer in answers:
        if sum(len(by_answer[a]) for a in chosen) >= kqa_pairs:
            break
        if answer not in chosen:
            chosen.append(answer)
    kqa = [p for a in chosen for p in by_answer[a]]
    medec: list[MedecText] = []
    types = sorted({t.error_type for t in data.medec})
    for kind in types:
        texts = sorted(
            (t for t in data.medec if t.error_type == kind),
            key=lambda t: (t.sibling_text is None, _order(t.id)),
        )
        medec.extend(texts[:medec_per_type])
    refusal: list[RefusalItem] = []
    harmful = [r for r in data.refusal if r.source == "medsafetybench"]
    for category in sorted({r.category for r in harmful}):
        rows = sorted((r for r in harmful if r.category == category), key=lambda r: _order(r.id))
        refusal.extend(rows[:refusal_per_category])
    answered = sorted((r for r in data.refusal if r.source == "kqa"), key=lambda r: _order(r.id))
    refusal.extend(answered[: len(refusal)])
    return CalibrationData(
        source=f"sample of {data.source}",
        kqa_nli=kqa,
        medec=medec,
        radfact=list(data.radfact if radfact is None else data.radfact[:radfact]),
        refusal=refusal,
    )
