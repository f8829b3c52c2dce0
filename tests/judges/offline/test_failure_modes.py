"""The failure modes found on held-out clinical data, each with text written for the project.

1. one-word clinical swaps (organism, subtype, stage, neighbouring diagnosis, drug, dose,
   side) judged entailed because the sentences are similar;
2. numbers compared with the wrong quantity;
3. broken claims from the splitter (see also tests/nlp/test_claims_corpus.py);
4. plain paraphrases missed;
5. short section answers scored inconsistently;
6. one filler word making a fully supported claim partial.
(7: TBFact's headline and F1 agree on n, tests/metrics/test_factuality.py; blank contexts,
tests/metrics/test_rag.py. 8: the MEDEC protocol, tests/calibration/test_protocols.py. 9: the
ASTRID example, tests/metrics/test_astrid_example.py.)
"""

from __future__ import annotations

import pytest

from clineval import evaluate
from clineval.judges.offline import OfflinePrimitives
from clineval.nlp.sentences import split_claims

# (evidence, claim): the claim swaps one clinical term for another of the same kind.
SWAPS = [
    pytest.param(
        "The urine culture grew Escherichia coli sensitive to nitrofurantoin.",
        "The urine culture grew Klebsiella pneumoniae sensitive to nitrofurantoin.",
        id="organism",
    ),
    pytest.param(
        "Her wound culture grew E. coli.", "Her wound culture grew Klebsiella.", id="organism-short"
    ),
    pytest.param(
        "He has type 1 diabetes, diagnosed at age 12.",
        "He has type 2 diabetes, diagnosed at age 12.",
        id="diabetes-type",
    ),
    pytest.param(
        "She was diagnosed with limited cutaneous systemic sclerosis in 2019.",
        "She was diagnosed with diffuse cutaneous systemic sclerosis in 2019.",
        id="limited-diffuse",
    ),
    pytest.param(
        "The patient has primary hyperparathyroidism.",
        "The patient has secondary hyperparathyroidism.",
        id="primary-secondary",
    ),
    # Not "endometriosis of the uterus": ICD-10-CM files adenomyosis under it (N80.0), and
    # MONDO has adenomyosis as a kind of endometriosis, so that claim is entailed.
    pytest.param(
        "Pelvic MRI showed adenomyosis of the uterus.",
        "Pelvic MRI showed leiomyoma of the uterus.",
        id="neighbouring-diagnosis",
    ),
    pytest.param("Biopsy showed a benign tumor.", "Biopsy showed a malignant tumor.", id="benign-malignant"),
    pytest.param("Stage III colon cancer.", "Stage II colon cancer.", id="stage"),
    pytest.param(
        "The patient was diagnosed with squamous cell carcinoma of the skin.",
        "The patient was diagnosed with basal cell carcinoma of the skin.",
        id="carcinoma-type",
    ),
    pytest.param(
        "He was started on lisinopril 20 mg daily.", "He was started on lisinopril 40 mg daily.", id="dose"
    ),
    pytest.param("She was started on losartan.", "She was started on lisinopril.", id="drug"),
    pytest.param("Small left pleural effusion.", "Small right pleural effusion.", id="side"),
    pytest.param(
        "He was admitted with an NSTEMI and had a stent placed.",
        "He was admitted with a STEMI and had a stent placed.",
        id="nstemi-vs-stemi",
    ),
    pytest.param(
        "He was admitted with a non-ST-elevation myocardial infarction.",
        "He was admitted with an ST-elevation myocardial infarction.",
        id="nstemi-vs-stemi-spelled-out",
    ),
    pytest.param(
        "The lungs are clear.", "There is a patchy opacity in the right lower lobe.", id="normal-vs-finding"
    ),
]


@pytest.mark.parametrize(("evidence", "claim"), SWAPS)
def test_one_word_clinical_swap_is_incorrect(
    primitives: OfflinePrimitives, evidence: str, claim: str
) -> None:
    (verdict,) = primitives.check_facts_sync([claim], evidence)
    assert (verdict.label, verdict.reason) == ("not_entailed", "incorrect"), verdict.explanation
    assert verdict.support == 0.0


@pytest.mark.parametrize(("evidence", "claim"), SWAPS[:6])
def test_a_swap_keeps_tbfact_precision_below_one(evidence: str, claim: str) -> None:
    result = evaluate(
        [{"id": "swap", "input": "Summarise.", "response": claim, "reference": evidence}],
        ["tbfact"],
        judge="offline",
        store=":memory:",
        progress=False,
    )
    (score,) = [r.score for r in result.results if r.metric == "tbfact"]
    assert score.sub_scores["precision"] is not None and score.sub_scores["precision"] < 1.0
    assert score.sub_scores["distortions"] >= 1.0


def test_a_swap_inside_general_knowledge_is_missing_not_a_contradiction(
    primitives: OfflinePrimitives,
) -> None:
    # "X can cause A" against "X can cause B": another item of a list, not a contradiction.
    (verdict,) = primitives.check_facts_sync(
        ["Lisinopril can cause a dry cough."], "Lisinopril can cause dizziness and high potassium."
    )
    assert verdict.reason != "incorrect" and verdict.label != "entailed"


def test_unchanged_wording_of_the_same_swap_frame_is_entailed(primitives: OfflinePrimitives) -> None:
    (verdict,) = primitives.check_facts_sync(
        ["The urine culture grew Escherichia coli."],
        "The urine culture grew Escherichia coli sensitive to nitrofurantoin.",
    )
    assert verdict.label == "entailed", verdict.explanation


@pytest.mark.parametrize(
    ("evidence", "claim", "label", "reason"),
    [
        # the decade is a range; "3 sisters" is another quantity and is never compared
        ("Her father died at 76. She has 3 sisters.", "Her father died in his 70s.", "entailed", None),
        (
            "Her father died at 64. She has 3 sisters.",
            "Her father died in his 70s.",
            "not_entailed",
            "incorrect",
        ),
        ("Her father died in his late 70s.", "Her father died at 78.", "entailed", None),
        ("He has 2 brothers; his mother died at 81.", "His mother died at 81.", "entailed", None),
        ("He has 2 brothers; his mother died at 81.", "He has 3 brothers.", "not_entailed", "incorrect"),
    ],
)
def test_numbers_are_compared_by_anchor_and_unit(
    primitives: OfflinePrimitives, evidence: str, claim: str, label: str, reason: str | None
) -> None:
    (verdict,) = primitives.check_facts_sync([claim], evidence)
    assert (verdict.label, verdict.reason) == (label, reason), verdict.explanation


def test_a_coordinated_quantifier_is_not_split_into_fragments() -> None:
    sentence = "She was sent to cardiology, but only once or twice."
    claims = split_claims(sentence)
    assert all(c.rstrip(".").split()[-1].lower() not in {"to", "but", "or", "and"} for c in claims)
    assert not any("sent to but" in c or "sent to twice" in c for c in claims)
    result = evaluate(
        [{"id": "c", "input": "q", "response": sentence, "reference": sentence}],
        ["tbfact"],
        judge="offline",
        store=":memory:",
        progress=False,
    )
    (score,) = [r.score for r in result.results if r.metric == "tbfact"]
    assert score.value == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("evidence", "claim"),
    [
        ("She lives by herself in an apartment.", "She lives alone in a flat."),
        ("His mom takes care of the kids on weekends.", "His mother takes care of the children on weekends."),
        (
            "If the pain persists or worsens, see your doctor.",
            "See a physician if the pain persists or worsens.",
        ),
        ("The heart is within normal limits.", "Heart size is normal."),
        ("Lexapro made her sleepy.", "Escitalopram caused drowsiness."),
        # everyday words for clinical terms, both ways
        ("He has had fever and body aches since Monday.", "He has had fever and myalgia since Monday."),
        ("The baby has thrush.", "The baby has oral candidiasis."),
        ("She reports painful urination and blood in the urine.", "She reports dysuria and hematuria."),
        ("Metformin can cause digestive side effects.", "Metformin can cause gastrointestinal side effects."),
        ("Her son had whooping cough last winter.", "Her son had pertussis last winter."),
        ("He was told to quit smoking.", "Smoking cessation was advised."),
        ("Talk to your healthcare provider before stopping it.", "Talk to your doctor before stopping it."),
        # an abbreviation and its expansion; a kind label in front of a fact only files it
        ("She was admitted with an NSTEMI.", "Diagnosis: non-ST-elevation myocardial infarction (NSTEMI)."),
        ("She was admitted with an NSTEMI.", "She had a heart attack."),
        ("Admitted with a non-ST elevation MI; LVEF 50%.", "Diagnosis: NSTEMI."),
        ("PMH: type 2 diabetes, hypertension.", "Diagnoses: type 2 diabetes, hypertension."),
        ("Discharged on aspirin 75 mg daily.", "Discharge medications: aspirin 75 mg daily."),
    ],
)
def test_plain_paraphrases_are_entailed(primitives: OfflinePrimitives, evidence: str, claim: str) -> None:
    (verdict,) = primitives.check_facts_sync([claim], evidence)
    assert verdict.label == "entailed", verdict.explanation


@pytest.mark.parametrize(
    ("evidence", "claim"),
    [
        ("She has the stomach flu.", "She has influenza."),
        ("He has a kidney stone.", "He has gallstones."),
        ("The child has an ear infection.", "The child has pink eye."),
        ("She had chickenpox as a child.", "She had shingles as a child."),
    ],
)
def test_everyday_names_of_different_conditions_do_not_match(
    primitives: OfflinePrimitives, evidence: str, claim: str
) -> None:
    (verdict,) = primitives.check_facts_sync([claim], evidence)
    assert verdict.label == "not_entailed", verdict.explanation


@pytest.mark.parametrize(
    ("response", "reference"),
    [
        ("No known drug allergies.", "None."),
        ("None.", "None."),
        ("Noncontributory.", "Noncontributory."),
        ("NKDA.", "No known drug allergies."),
    ],
)
def test_short_section_answers_agree(response: str, reference: str) -> None:
    result = evaluate(
        [{"id": "s", "input": "Allergies?", "response": response, "reference": reference}],
        ["tbfact"],
        judge="offline",
        store=":memory:",
        progress=False,
    )
    (score,) = [r.score for r in result.results if r.metric == "tbfact"]
    assert score.status == "scored" and score.value == pytest.approx(1.0)


@pytest.mark.parametrize("filler", ["Moreover,", "Furthermore,", "Notably,", "In addition,", "Importantly,"])
def test_a_filler_word_does_not_make_a_supported_claim_partial(
    primitives: OfflinePrimitives, filler: str
) -> None:
    evidence = "The patient reports chest pain on exertion, relieved by rest."
    (verdict,) = primitives.check_facts_sync(
        [f"{filler} the patient reports chest pain on exertion."], evidence
    )
    assert verdict.label == "entailed", verdict.explanation
    result = evaluate(
        [
            {
                "id": "f",
                "input": "Does he have chest pain?",
                "response": f"{filler} the patient reports chest pain on exertion.",
                "contexts": [evidence],
            }
        ],
        ["faithfulness", "conversational_faithfulness"],
        judge="offline",
        store=":memory:",
        progress=False,
    )
    values = {r.metric: r.score.value for r in result.results}
    assert values == {"faithfulness": pytest.approx(1.0), "conversational_faithfulness": pytest.approx(1.0)}
