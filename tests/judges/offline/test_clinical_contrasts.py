"""check_facts: what a clinician reads as the opposite, although the sentences share every
other word: route, start or stop, timing and order, more or less, limits, durations in
other units, the family's history denied, advice for a population.

Texts written for these tests. Before the change each contradiction below was judged
entailed (support 0.8 to 1.0), and each paraphrase marked as such was judged incorrect.
"""

from __future__ import annotations

import pytest
from tests.judges.offline.verdicts import label_and_reason as _one

from clineval.judges.offline import OfflinePrimitives

CONTRADICTIONS = [
    # route
    (
        "Ceftriaxone was given orally for the meningitis.",
        "Ceftriaxone was given intravenously for the meningitis.",
    ),
    ("Ketorolac 15 mg PO was given for the pain.", "Ketorolac 15 mg IV was given for the pain."),
    (
        "Adrenaline was given intravenously for the anaphylaxis.",
        "Adrenaline was given intramuscularly for the anaphylaxis.",
    ),
    # start, continue or stop
    ("Continue warfarin after discharge.", "Discontinue warfarin after discharge."),
    ("Hold apixaban before the colonoscopy.", "Continue apixaban before the colonoscopy."),
    ("Restart lisinopril at discharge.", "Stop lisinopril at discharge."),
    ("Keep taking naproxen if the stools turn black.", "Stop taking naproxen if the stools turn black."),
    # timing and order
    ("Take atorvastatin in the morning.", "Take atorvastatin at bedtime."),
    (
        "The hives began before the first dose of amoxicillin.",
        "The hives began after the first dose of amoxicillin.",
    ),
    ("Take the iron tablet one hour after meals.", "Take the iron tablet one hour before meals."),
    # more or less, higher or lower, faster or slower, better or worse
    (
        "Rivaroxaban has a higher risk of bleeding than dabigatran.",
        "Rivaroxaban has a lower risk of bleeding than dabigatran.",
    ),
    ("Older adults need a larger dose of gabapentin.", "Older adults need a smaller dose of gabapentin."),
    ("Metoprolol speeds up the heart rate.", "Metoprolol slows the heart rate."),
    ("Sodium levels rose after starting the diuretic.", "Sodium levels fell after starting the diuretic."),
    ("His renal function is better than last week.", "His renal function is worse than last week."),
    (
        "Topical steroids are less effective than emollients for eczema.",
        "Topical steroids are more effective than emollients for eczema.",
    ),
    ("Amlodipine may raise blood pressure.", "Amlodipine may lower blood pressure."),
    # normal against abnormal
    ("The lipase was normal.", "The lipase was elevated."),
    # degree
    ("She has a second-degree burn on the hand.", "She has a third-degree burn on the hand."),
    ("The ECG shows first-degree heart block.", "The ECG shows third-degree heart block."),
    # acuity
    (
        "There is an acute infarct in the right cerebellum.",
        "There is an old infarct in the right cerebellum.",
    ),
    # a family history denied
    ("There is a family history of ovarian cancer.", "There is no family history of ovarian cancer."),
    # advice for a population ("children" is not a relative)
    (
        "Codeine is recommended for children with a cough.",
        "Codeine is not recommended for children with a cough.",
    ),
    (
        "Children need a higher dose of amoxicillin per kilogram than adults.",
        "Children need a lower dose of amoxicillin per kilogram than adults.",
    ),
    # safe and unsafe
    ("Warfarin is unsafe during pregnancy.", "Warfarin is safe during pregnancy."),
    # two upper limits of a dose
    (
        "Adults may take up to 6 g of paracetamol a day.",
        "Adults should not take more than 4 g of paracetamol a day.",
    ),
    # permission against an instruction
    (
        "You can stop taking ticagrelor without asking your cardiologist.",
        "Do not stop taking ticagrelor without asking your cardiologist.",
    ),
    # diagnosis
    ("The ECG showed atrial flutter.", "The ECG showed atrial fibrillation."),
]


@pytest.mark.parametrize(("claim", "evidence"), CONTRADICTIONS)
def test_the_opposite_is_not_entailed(primitives: OfflinePrimitives, claim: str, evidence: str) -> None:
    label, _ = _one(primitives, claim, evidence)
    assert label != "entailed"


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [c for c in CONTRADICTIONS if "second-degree" not in c[0] and "old infarct" not in c[1]],
)
def test_the_opposite_is_a_contradiction(primitives: OfflinePrimitives, claim: str, evidence: str) -> None:
    assert _one(primitives, claim, evidence) == ("not_entailed", "incorrect")


PARAPHRASES = [
    # durations in other units
    (
        "Dual antiplatelet therapy is continued for one year.",
        "Dual antiplatelet therapy is continued for 12 months.",
    ),
    ("The first dose is given at 8 weeks of age.", "The first dose is given at 2 months of age."),
    # a frequency in hours
    ("Cefazolin 2 g IV every 24 hours.", "Cefazolin 2 g IV once daily."),
    # a genus written short
    ("Sputum grew Strep pneumoniae.", "Sputum grew Streptococcus pneumoniae."),
    # two lower limits of different things are not a conflict
    (
        "An attack that lasts more than 72 hours needs urgent care.",
        "Some attacks can last more than 24 hours.",
    ),
]


@pytest.mark.parametrize(("claim", "evidence"), PARAPHRASES)
def test_the_same_said_otherwise_is_not_a_contradiction(
    primitives: OfflinePrimitives, claim: str, evidence: str
) -> None:
    assert _one(primitives, claim, evidence)[1] != "incorrect"


@pytest.mark.parametrize(("claim", "evidence"), PARAPHRASES[:4])
def test_the_same_said_otherwise_is_entailed(
    primitives: OfflinePrimitives, claim: str, evidence: str
) -> None:
    assert _one(primitives, claim, evidence) == ("entailed", None)


MORE_CONTRADICTIONS = [
    # close diagnoses with a shared word
    ("The monitor showed supraventricular tachycardia.", "The monitor showed ventricular tachycardia."),
    ("The biopsy is consistent with Crohn's disease.", "The biopsy is consistent with ulcerative colitis."),
    # an age in months is not an age in years
    ("The patient is a 9-year-old girl with a rash.", "The patient is a 9-month-old girl with a rash."),
    # frequencies in hours
    ("Observations were done every 12 hours.", "Observations were done every 4 hours."),
    # with or without food
    ("Take alendronate with breakfast.", "Take alendronate on an empty stomach."),
    # route in words
    ("Insulin glargine is taken by mouth.", "Insulin glargine is injected under the skin."),
    # where a finding was found
    ("Ultrasound showed a 2 cm cyst in the spleen.", "Ultrasound showed a 2 cm cyst in the right kidney."),
]


@pytest.mark.parametrize(("claim", "evidence"), MORE_CONTRADICTIONS)
def test_more_opposites_are_contradictions(primitives: OfflinePrimitives, claim: str, evidence: str) -> None:
    assert _one(primitives, claim, evidence) == ("not_entailed", "incorrect")


def test_an_opposite_in_a_longer_note_is_not_made_up_by_other_sentences(
    primitives: OfflinePrimitives,
) -> None:
    # was entailed: "lisinopril" from one sentence and "admission" from another, the missing
    # "continued" made up by other words although the note says "held"
    note = (
        "Admitted with pneumonia and acute kidney injury. Ramipril was held because of the kidney injury. "
        "Sodium was 131 on admission. She was discharged on day 5."
    )
    label, _ = _one(primitives, "Ramipril was continued during the admission.", note)
    assert label != "entailed"


def test_a_denied_rival_agrees_with_the_claim(primitives: OfflinePrimitives) -> None:
    assert _one(primitives, "Take naproxen with food.", "Do not take naproxen on an empty stomach.")[1] != (
        "incorrect"
    )


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        # sex after an age, "F"/"M"
        ("The patient is a 52-year-old man.", "HPI: 52 yo F with a history of asthma."),
        # first- or second-line
        (
            "Sertraline is a second-line treatment for depression.",
            "Sertraline is a first-line treatment for depression.",
        ),
        # grown against stable
        ("The nodule has grown since the last scan.", "The nodule is stable since the last scan."),
        # the subject of "should be avoided" is before "except for ..."
        (
            "Bananas should be avoided in diarrhoea.",
            "Most fruit, except for bananas, should be avoided in diarrhoea.",
        ),
    ],
)
def test_still_more_opposites_are_not_entailed(
    primitives: OfflinePrimitives, claim: str, evidence: str
) -> None:
    assert _one(primitives, claim, evidence)[0] != "entailed"


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        (
            "He has not had a seizure since starting levetiracetam.",
            "Seizure-free since starting levetiracetam.",
        ),
        ("The baby is a two-month-old boy.", "8-week-old boy with a cough."),
        ("Allergies: latex, penicillin.", "Allergic to penicillin and latex."),
        ("She was in shock needing vasopressors.", "Shock needing norepinephrine; lactate 5.1."),
        ("There is no family history of diabetes.", "FHx: no diabetes."),
        (
            "Tetracyclines should not be used in pregnancy.",
            "Tetracyclines are generally avoided in pregnancy.",
        ),
    ],
)
def test_more_paraphrases_are_not_contradictions(
    primitives: OfflinePrimitives, claim: str, evidence: str
) -> None:
    assert _one(primitives, claim, evidence)[1] != "incorrect"


def test_a_drug_of_the_class_entails_the_class(primitives: OfflinePrimitives) -> None:
    assert _one(primitives, "She was in shock needing vasopressors.", "Shock needing norepinephrine.")[0] == (
        "entailed"
    )


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        # each was entailed: a drug advised against on one side, called safe on the other
        ("Lisinopril is safe in pregnancy.", "Lisinopril is contraindicated in pregnancy."),
        ("Naproxen is safe in pregnancy.", "Avoid naproxen in the third trimester of pregnancy."),
    ],
)
def test_safe_against_advised_against_is_not_entailed(
    primitives: OfflinePrimitives, claim: str, evidence: str
) -> None:
    assert _one(primitives, claim, evidence)[0] != "entailed"


def test_safe_against_contraindicated_for_the_same_thing_is_a_contradiction(
    primitives: OfflinePrimitives,
) -> None:
    assert _one(
        primitives, "Lisinopril is safe in pregnancy.", "Lisinopril is contraindicated in pregnancy."
    ) == (
        "not_entailed",
        "incorrect",
    )


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        # each was entailed
        ("The wound infection began after surgery.", "Wound erythema noted pre-op; surgery delayed."),
        ("Methotrexate is the preferred treatment in pregnancy.", "Methotrexate is avoided in pregnancy."),
        (
            "Ibuprofen should be avoided in the first trimester.",
            "Ibuprofen is generally considered safe to use in the first trimester.",
        ),
    ],
)
def test_timing_words_and_preference_against_avoidance(
    primitives: OfflinePrimitives, claim: str, evidence: str
) -> None:
    assert _one(primitives, claim, evidence)[0] != "entailed"


def test_post_op_is_after_surgery(primitives: OfflinePrimitives) -> None:
    assert _one(primitives, "The fever began after surgery.", "Fever to 38.6 post-op.")[1] != "incorrect"
