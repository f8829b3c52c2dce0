"""Stages, classes and grades in short and long form, and how a claim's relates to the
evidence's. Texts written for these tests."""

from __future__ import annotations

import pytest

from clineval.nlp.staging import StageMention, stage_mentions, stage_relation, stage_relations
from clineval.nlp.terms import normalize


def mentions(text: str) -> list[tuple[str, str]]:
    return [(m.system, m.value) for m in stage_mentions(normalize(text))]


def spans(text: str) -> dict[str, str]:
    normalized = normalize(text)
    return {m.system: normalized[m.start : m.end] for m in stage_mentions(normalized)}


def relations(claim: str, evidence: str) -> list[tuple[str, str]]:
    found = stage_relations(stage_mentions(normalize(claim)), stage_mentions(normalize(evidence)))
    return [(r.claim.system, r.relation) for r in found]


def test_tnm_strings() -> None:
    assert sorted(mentions("Pathologic stage: pT3 pN1b M0.")) == [
        ("tnm_m", "0"),
        ("tnm_n", "1b"),
        ("tnm_t", "3"),
    ]
    assert sorted(mentions("T4aN2M1c")) == [("tnm_m", "1c"), ("tnm_n", "2"), ("tnm_t", "4a")]
    assert sorted(mentions("Staged as T3, N1, M0.")) == [("tnm_m", "0"), ("tnm_n", "1"), ("tnm_t", "3")]
    assert sorted(mentions("ypT0 ypN0 after neoadjuvant therapy")) == [("tnm_n", "0"), ("tnm_t", "0")]
    assert sorted(mentions("Tis N0 M0")) == [("tnm_m", "0"), ("tnm_n", "0"), ("tnm_t", "is")]
    (t,) = [m for m in stage_mentions(normalize("cT2 cN0")) if m.system == "tnm_t"]
    assert (t.value, t.qualifier) == ("2", "c")


@pytest.mark.parametrize(
    "text",
    [
        "T2-weighted images show a hyperintense lesion.",  # an MRI sequence
        "Compression fracture of T12.",  # a vertebra
        "Free T4 1.1 ng/dL, TSH normal.",  # a hormone
        "Occlusion of the M1 segment.",  # an artery
    ],
)
def test_not_tnm(text: str) -> None:
    assert [m for m in mentions(text) if m[0].startswith("tnm")] == []


def test_lone_categories_in_a_staging_context() -> None:
    assert mentions("The primary tumour was T3.") == [("tnm_t", "3")]
    assert spans("The primary tumour was T3.")["tnm_t"] == "primary tumour was t3"
    assert mentions("A pT1a tumour.") == [("tnm_t", "1a")]
    assert spans("A T2 tumor of the left breast.")["tnm_t"] == "t2 tumor"


def test_long_forms_of_nodes_and_metastases() -> None:
    assert mentions("There was no lymph node metastasis.") == [("tnm_n", "0")]
    assert mentions("Lymph nodes: 0/18.") == [("tnm_n", "0")]
    assert mentions("All nodes were negative.") == [("tnm_n", "0")]
    assert mentions("Node-positive disease.") == [("tnm_n", "+")]
    assert mentions("Metastatic carcinoma in 3 of 15 lymph nodes positive.")[-1] == ("tnm_n", "+")
    assert mentions("No evidence of distant spread.") == [("tnm_m", "0")]
    assert mentions("Non-metastatic disease.") == [("tnm_m", "0")]
    assert mentions("Bone metastases were found.") == [("tnm_m", "1")]
    assert mentions("Metastases to both lungs.") == [("tnm_m", "1")]
    assert mentions("Metastatic melanoma.") == [("tnm_m", "1")]
    # negated distant metastasis is M0 even though "distant metastasis" is inside it
    assert mentions("Without distant metastases.") == [("tnm_m", "0")]
    # metastases denied in a lymph node are N0
    assert mentions("The sentinel lymph node was negative for metastases.") == [("tnm_n", "0")]
    # a negated site is not M1
    assert ("tnm_m", "1") not in mentions("No liver metastases.")


def test_depth_of_invasion() -> None:
    assert mentions("Tumor invades into the submucosa.") == [("tnm_t", "1")]
    assert mentions("Carcinoma invading the muscularis propria.") == [("tnm_t", "2")]
    assert mentions("Tumor extends through the muscularis propria into pericolorectal tissue.")[0] == (
        "tnm_t",
        "3",
    )
    assert mentions("The tumor penetrates the visceral peritoneum.") == [("tnm_t", "4a")]


def test_stage_groups_and_their_systems() -> None:
    assert mentions("Stage IIB melanoma.") == [("stage", "2b")]
    assert mentions("Stage four ovarian cancer.") == [("stage", "4")]
    assert mentions("FIGO stage IIIC1 endometrial cancer.") == [("figo", "3c1")]
    assert mentions("CKD stage 4.") == [("ckd", "4")]
    assert mentions("Stage 3a chronic kidney disease.") == [("ckd", "3a")]
    assert mentions("CKD G3b.") == [("ckd", "3b")]
    assert mentions("End-stage renal disease on dialysis.") == [("ckd", "5")]
    assert mentions("AKI stage 2.") == [("kdigo", "2")]
    assert mentions("Stage 1 acute kidney injury.") == [("kdigo", "1")]
    assert mentions("Unstageable pressure ulcer; stage 3 pressure ulcer on the heel.") == [
        ("pressure_injury", "3")
    ]
    assert mentions("Stage 2 hypertension.") == [("hypertension", "2")]
    assert mentions("COPD, GOLD grade 3.") == [("gold", "3")]
    assert mentions("Ann Arbor stage IIIB Hodgkin lymphoma.") == [("ann_arbor", "3b")]


def test_classes_and_grades() -> None:
    assert mentions("NYHA II dyspnea.") == [("nyha", "2")]
    assert mentions("New York Heart Association class IV.") == [("nyha", "4")]
    assert mentions("NYHA class II-III symptoms.") == [("nyha", "2-3")]
    assert mentions("Gleason 4+4=8.") == [("gleason", "4+4")]
    assert mentions("Gleason score 6.") == [("gleason", "6")]
    assert mentions("Gleason score of 7 (4+3).") == [("gleason", "4+3")]
    assert mentions("ISUP Grade Group 4.") == [("grade_group", "4")]
    assert mentions("Nottingham grade 2 of 3.") == [("grade", "2")]
    assert mentions("High-grade serous carcinoma.") == [("grade", "high")]
    assert mentions("Grade II/VI systolic murmur.") == []  # a murmur's grade
    assert mentions("Grade 3 out of 6 holosystolic murmur.") == []
    assert mentions("Low-grade fevers for a week.") == []  # a temperature, not a grade
    assert mentions("Child-Pugh class C.") == [("child_pugh", "c")]
    assert mentions("ECOG performance status 2.") == [("ecog", "2")]


@pytest.mark.parametrize(
    ("claim", "evidence", "expected"),
    [
        # the same stage written two ways
        ("The tumour is T3 with no nodal metastases.", "pT3 N0 M0", [("tnm_t", "agree"), ("tnm_n", "agree")]),
        (
            "Rectal cancer, T3N1M0.",
            "T3 N1 M0 rectal adenocarcinoma",
            [("tnm_m", "agree"), ("tnm_n", "agree"), ("tnm_t", "agree")],
        ),
        (
            "Stage IV pancreatic cancer with liver metastases.",
            "Stage 4 pancreatic cancer; metastatic to the liver.",
            [("stage", "agree"), ("tnm_m", "agree")],
        ),
        ("CKD stage 3a.", "CKD 3a.", [("ckd", "agree")]),
        ("NYHA class II.", "New York Heart Association functional class 2.", [("nyha", "agree")]),
        ("Gleason 7 (4+3).", "Gleason score 4+3=7.", [("gleason", "agree")]),
        ("Gleason score 8.", "Gleason 4+4.", [("gleason", "agree")]),
        ("Node-positive breast cancer.", "pT2 pN2a M0", [("tnm_n", "agree")]),
        ("T1 tumour.", "cT1b N0", [("tnm_t", "agree")]),  # a category is said by its subcategory
        ("Grade group 4.", "Gleason 4+4=8.", [("grade_group", "agree")]),
        ("Gleason 3+4.", "Grade group 2.", [("gleason", "agree")]),
        # a different stage
        ("Stage IIB.", "Stage IIA.", [("stage", "conflict")]),
        ("CKD 3a.", "CKD 3b.", [("ckd", "conflict")]),
        ("Gleason 3+4=7.", "Gleason 4+3=7.", [("gleason", "conflict")]),
        ("Gleason score 6.", "Gleason 4+3.", [("gleason", "conflict")]),
        ("Grade group 3.", "Gleason 3+4.", [("grade_group", "conflict")]),
        ("No lymph node metastases.", "pN1a", [("tnm_n", "conflict")]),
        ("No distant metastasis.", "Metastases to the bones.", [("tnm_m", "conflict")]),
        ("Stage 3 AKI.", "AKI, KDIGO stage 1.", [("kdigo", "conflict")]),
        ("NYHA class IV.", "NYHA class II-III.", [("nyha", "conflict")]),
        ("Low-grade tumour.", "High-grade tumour.", [("grade", "conflict")]),
        # neither: more specific than the evidence, another basis, another disease, unknown
        ("T1c tumour.", "T1 tumour.", []),
        ("Gleason 3+4.", "Gleason 7.", []),
        ("Grade group 2.", "Gleason 7.", []),
        ("cT2 N0.", "ypT0 ypN0.", [("tnm_n", "agree")]),
        ("Stage 4 CKD.", "Stage IV lung cancer.", []),
        ("Stage 2 pressure injury.", "Stage II breast cancer.", []),
        ("Tx N0.", "T2 N0.", [("tnm_n", "agree")]),
        ("Nottingham grade 3.", "Fuhrman grade 1.", []),
    ],
)
def test_relations(claim: str, evidence: str, expected: list[tuple[str, str]]) -> None:
    assert sorted(relations(claim, evidence)) == sorted(expected)


def test_an_agreeing_mention_wins_over_a_conflicting_one() -> None:
    # the evidence gives a clinical and a pathological T
    (relation,) = relations("T2 tumour.", "cT3 tumour; after therapy ypT2.")
    assert relation == ("tnm_t", "agree")


def test_relation_of_two_mentions() -> None:
    claim = StageMention("stage", "3a", 0, 9)
    assert stage_relation(claim, StageMention("stage", "3a", 5, 14)) == "agree"
    assert stage_relation(claim, StageMention("stage", "3b", 5, 14)) == "conflict"
    assert stage_relation(claim, StageMention("ckd", "3a", 5, 14)) is None
    assert (
        stage_relation(StageMention("tnm_t", "2", 0, 2, "c"), StageMention("tnm_t", "3", 0, 2, "p")) is None
    )


def test_roman_numerals_and_their_ranges_are_arabic() -> None:
    assert normalize("Stage IIIA-IIIB") == "stage 3a-3b"
    assert normalize("class II to III") == "class 2-3"
    assert normalize("grade III/VI murmur") == "grade 3/6 murmur"
    assert normalize("Stage I and II") == "stage 1 and ii"  # not a range
