"""check_facts on clinical-note shorthand: a plain-English claim against the note's
abbreviations is entailed, and the shorthand never makes a contradiction of a paraphrase.

Texts written for these tests; before the change each pair was judged partial or not
entailed (the marked ones incorrect).
"""

from __future__ import annotations

import pytest
from tests.judges.offline.verdicts import label_and_reason as _one

from clineval.judges.offline import OfflinePrimitives

SHORTHAND = [
    ("She complains of headache with nausea and vomiting.", "Pt c/o HA and N/V since this morning."),
    ("He gets dyspnea on exertion.", "Reports DOE after two flights of stairs."),
    ("The biopsy showed basal cell carcinoma.", "Bx: BCC, margins clear."),
    ("She was admitted with diabetic ketoacidosis.", "Admitted with DKA, anion gap closed on day 2."),
    ("His sister has lupus.", "FHx: sister with SLE."),
    ("Platelets were 62,000.", "Plt 62K, no bleeding."),
    ("The hemoglobin was 7.9.", "Hgb 7.9 this morning."),
    ("He is allergic to penicillin.", "Allergies: PCN (rash)."),
    ("Naloxone 0.4 mg was given IV.", "Narcan 0.4 mg IV given with good response."),
    ("Ferrous sulfate is taken every other day.", "FeSO4 325 mg PO QOD."),
    ("There is a low platelet count.", "Thrombocytopenia, plt 88."),
    ("The HIV test was negative.", "HIV Ag/Ab nonreactive."),
    ("The patient is a 41-year-old woman.", "41F presenting with right lower quadrant pain."),
    ("He weighs about 82 kg.", "Wt 181 lb."),
    ("There is a right-sided pneumothorax.", "Small R PTX, no mediastinal shift."),
    ("Atorvastatin was started after the MI.", "Post-MI, atorvastatin 80 mg nightly was started."),
    ("She is allergic to sulfa drugs.", "Allergies: sulfonamides (hives)."),
    ("There is swelling of both legs.", "2+ pitting edema of the BLE."),
]


@pytest.mark.parametrize(("claim", "evidence"), SHORTHAND)
def test_a_claim_in_words_is_entailed_by_note_shorthand(
    primitives: OfflinePrimitives, claim: str, evidence: str
) -> None:
    assert _one(primitives, claim, evidence) == ("entailed", None)


def test_stroke_excluded_is_stroke_ruled_out(primitives: OfflinePrimitives) -> None:
    assert _one(primitives, "Stroke was excluded.", "MRI negative; stroke ruled out.")[1] != "incorrect"


def test_advice_against_a_population_and_against_the_drug_agree(primitives: OfflinePrimitives) -> None:
    # was not_entailed/incorrect: "the claim negates 'valproat', the evidence asserts it"
    _, reason = _one(
        primitives,
        "Carbamazepine should be avoided in pregnancy.",
        "Carbamazepine can harm the baby; avoid in women who are or may become pregnant.",
    )
    assert reason != "incorrect"


def test_shorthand_still_shows_a_swapped_side(primitives: OfflinePrimitives) -> None:
    assert _one(primitives, "There is a left-sided pneumothorax.", "Small right PTX.") == (
        "not_entailed",
        "incorrect",
    )


def test_a_platelet_count_in_thousands_still_conflicts(primitives: OfflinePrimitives) -> None:
    assert _one(primitives, "Platelets were 45,000.", "Plt 145K.") == ("not_entailed", "incorrect")
