"""Every claim split from real clinical sentences keeps its verb and its object, ends on a
word that can end a clause, and together the claims keep every content word.

The sentences are read from the shared public data next to the repository (ACI-Bench
reference notes, MEDEC clinical texts, K-QA physician answers), not copied into it; each
of those corpora is skipped when its file is absent. The samples packaged with
``clineval.calibration`` (K-QA answers, MEDEC texts, RadFact report phrases) are always
present, so a clean checkout checks them too. The invariants are checked by
``tests/nlp/claim_invariants.py``, written apart from the splitter.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.nlp.claim_invariants import violations

from clineval.nlp.sentences import split_claims, split_sentences

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
ACI_NOTES = [DATA / "aci-bench" / "valid.csv", DATA / "aci-bench" / "clinicalnlp_taskB_test1.csv"]
MEDEC = DATA / "medec" / "MEDEC-MS-ValidationSet-with-GroundTruth-and-ErrorType.csv"
KQA = DATA / "kqa" / "questions_w_answers.jsonl"


def _rows(path: Path) -> Iterator[dict[str, str]]:
    csv.field_size_limit(10**8)
    with path.open(encoding="utf-8", newline="") as handle:
        yield from csv.DictReader(handle)


def _aci_sentences() -> list[str]:
    return [s for path in ACI_NOTES for row in _rows(path) for s in split_sentences(row["note"])]


def _medec_sentences() -> list[str]:
    # MEDEC ships its texts already split, one numbered sentence per line.
    return [
        re.sub(r"^\d+\s+", "", line).strip()
        for row in _rows(MEDEC)
        for line in row["Sentences"].splitlines()
        if line.strip()
    ]


def _kqa_sentences() -> list[str]:
    with KQA.open(encoding="utf-8") as handle:
        answers = [json.loads(line)["Free_form_answer"] for line in handle if line.strip()]
    return [s for answer in answers for s in split_sentences(answer)]


SAMPLES = Path(__file__).resolve().parents[2] / "src" / "clineval" / "calibration" / "samples"


def _jsonl(path: Path) -> list[dict[str, object]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _sample_sentences() -> list[str]:
    texts = [str(row["answer"]) for row in _jsonl(SAMPLES / "kqa_nli.jsonl")]
    texts += [str(row["text"]) for row in _jsonl(SAMPLES / "medec.jsonl")]
    for row in _jsonl(SAMPLES / "radfact.jsonl"):
        for key in ("phrases_a", "phrases_b"):
            phrases = row[key]
            assert isinstance(phrases, list)
            texts += [str(phrase) for phrase in phrases]
    return [s for text in texts for s in split_sentences(text)]


CORPORA = {
    "aci-bench notes": (ACI_NOTES, _aci_sentences),
    "medec texts": ([MEDEC], _medec_sentences),
    "k-qa answers": ([KQA], _kqa_sentences),
    "packaged samples": ([SAMPLES / "kqa_nli.jsonl", SAMPLES / "medec.jsonl"], _sample_sentences),
}


@pytest.mark.parametrize("corpus", list(CORPORA))
def test_every_claim_of_real_sentences_is_sound(corpus: str) -> None:
    paths, read = CORPORA[corpus]
    if not all(path.is_file() for path in paths):
        pytest.skip(f"{corpus}: shared data not available at {DATA}")
    sentences = read()
    assert len(sentences) > 500
    broken: list[str] = []
    claims = 0
    for sentence in sentences:
        split = split_claims(sentence)
        claims += len(split)
        broken.extend(f"{kind}: {what!r} from {sentence!r}" for kind, what in violations(sentence, split))
    assert claims >= len(sentences)
    assert not broken, f"{len(broken)} broken claim(s) of {claims}:\n" + "\n".join(broken[:20])


# --- the checker itself catches what it is there to catch -------------------------------------


@pytest.mark.parametrize(
    ("sentence", "claims", "kind"),
    [
        (
            "She was sent to cardiology, but only once or twice.",
            ["She was sent to cardiology.", "She was sent to but only once.", "She was sent to twice."],
            "broken join",
        ),
        (
            "She uses either albuterol or ipratropium.",
            ["She uses either albuterol.", "Ipratropium."],
            "lost correlative",
        ),
        ("Take between 5 and 10 mg at night.", ["Take between 5.", "10 mg at night."], "lost correlative"),
        (
            "He takes lisinopril daily, and he walks.",
            ["He takes lisinopril daily, and.", "He walks."],
            "dangling end",
        ),
        ("He takes it once or twice a week.", ["He takes it once.", "Or twice a week."], "dangling start"),
        (
            "His father and his brother have diabetes.",
            ["His father.", "His brother have diabetes."],
            "lost verb",
        ),
        ("He denies fever, chills, and cough.", ["He denies fever.", "He denies chills."], "lost word"),
        (
            "The boy attends school, but has not been going.",
            ["The boy attends school.", "The has not been going."],
            "broken join",
        ),
    ],
)
def test_the_checker_flags_broken_claims(sentence: str, claims: list[str], kind: str) -> None:
    assert kind in {k for k, _ in violations(sentence, claims)}


@pytest.mark.parametrize(
    ("sentence", "claims"),
    [
        (
            "He denies fever, chills, and cough.",
            ["He denies fever.", "He denies chills.", "He denies cough."],
        ),
        (
            "He bought shoes to travel with and the pain resolved.",
            ["He bought shoes to travel with.", "The pain resolved."],
        ),
        ("Lungs clear, heart regular.", ["Lungs clear.", "Heart regular."]),
        ("Medical Reasoning: He has a viral syndrome.", ["He has a viral syndrome."]),
    ],
)
def test_the_checker_accepts_sound_claims(sentence: str, claims: list[str]) -> None:
    assert violations(sentence, claims) == []
