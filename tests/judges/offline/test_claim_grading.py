"""check_facts: graded credit of partly supported claims, and conflicts that are not.

Texts written for these tests. Each case names the behaviour it pins down; the verdicts
before the change are in the comments.
"""

from __future__ import annotations

from clineval.judges.offline import OfflinePrimitives
from clineval.nlp.assertions import detect_assertions


def _one(primitives: OfflinePrimitives, claim: str, evidence: str) -> tuple[str, str | None, float]:
    (verdict,) = primitives.check_facts_sync([claim], evidence)
    return verdict.label, verdict.reason, float(verdict.support or 0.0)


# --- graded credit -------------------------------------------------------------------------


def test_missing_clinical_term_with_a_close_neighbour_earns_more_credit(
    primitives: OfflinePrimitives,
) -> None:
    """A clinical term the evidence does not state stays missing (the claim is partial),
    but one the evidence names something close to ("proctitis" / "sores around the
    rectum") grades the claim higher than one with nothing close ("keratitis")."""
    evidence = "Herpes can cause painful sores around the rectum and anus."
    near = _one(primitives, "Herpes can cause proctitis and anal sores.", evidence)
    far = _one(primitives, "Herpes can cause keratitis and anal sores.", evidence)
    # partial or not entailed is the fitted decision's call; neither is entailed nor a conflict
    assert near[0] != "entailed" and far[0] != "entailed" and near[1] == far[1] == "missing"
    assert near[2] > far[2] + 0.03  # was 0.60 against 0.59: only the words shared counted
    assert 0.0 < far[2] < near[2] < 1.0


def test_graded_credit_never_makes_a_claim_entailed(primitives: OfflinePrimitives) -> None:
    label, reason, support = _one(
        primitives, "The culture grew Klebsiella.", "The urine culture grew Escherichia coli."
    )
    assert label != "entailed"
    assert reason == "incorrect" or support < 1.0


# --- no conflict where the evidence is less specific or names someone to ask -----------------


def test_drug_class_is_not_a_substitute_for_a_drug_of_that_class(primitives: OfflinePrimitives) -> None:
    # was not_entailed/incorrect: "substitution (drug): 'clobetasol' ..., 'steroid' ..."
    label, reason, _ = _one(
        primitives,
        "Clobetasol is applied to the skin twice a day.",
        "It is a topical corticosteroid that is applied to the skin twice a day.",
    )
    assert reason != "incorrect"
    assert label in ("partial", "not_entailed")


def test_another_drug_of_the_same_class_is_still_a_conflict(primitives: OfflinePrimitives) -> None:
    label, reason, support = _one(
        primitives,
        "Clobetasol cream is applied to the skin twice a day.",
        "Hydrocortisone cream is applied to the skin twice a day.",
    )
    assert (label, reason, support) == ("not_entailed", "incorrect", 0.0)


def test_a_care_role_is_not_a_rival_diagnosis(primitives: OfflinePrimitives) -> None:
    # was not_entailed/incorrect: "substitution (diagnosis): 'anxiety' ..., 'pharmacist' ..."
    label, reason, _ = _one(
        primitives,
        "Escitalopram is a medication for several types of anxiety disorders.",
        "If you have any questions about escitalopram, talk to your doctor or pharmacist.",
    )
    assert reason != "incorrect"
    assert label != "entailed"  # the evidence does not say what it treats: missing, not contradicted


# --- experiencer: a population in general knowledge is not a relative ------------------------


def test_population_in_general_knowledge_is_not_another_experiencer(primitives: OfflinePrimitives) -> None:
    # was not_entailed/incorrect: "experiencer: the evidence says this of another person"
    label, reason, _ = _one(
        primitives,
        "Oral rehydration solution can help with dehydration.",
        "Oral rehydration solution can help reduce dehydration in children.",
    )
    assert (label, reason) == ("entailed", None)


def test_relative_in_a_note_is_still_another_experiencer(primitives: OfflinePrimitives) -> None:
    label, reason, _ = _one(primitives, "She has type 2 diabetes.", "Her mother has type 2 diabetes.")
    assert (label, reason) == ("not_entailed", "incorrect")


# --- "not usually": a frequency, not a denial --------------------------------------------------


def test_not_usually_is_a_hedge_not_a_negation() -> None:
    result = detect_assertions("A chest cold does not usually turn into pneumonia.")
    statuses = dict(zip((t.text for t in result.tokens), result.statuses, strict=True))
    assert statuses["pneumonia"] == frozenset({"possible"})
    plain = detect_assertions("A chest cold does not turn into pneumonia.")
    plain_statuses = dict(zip((t.text for t in plain.tokens), plain.statuses, strict=True))
    assert "negated" in plain_statuses["pneumonia"]


def test_not_usually_does_not_contradict_a_possibility(primitives: OfflinePrimitives) -> None:
    # was not_entailed/incorrect: "negation: the claim asserts 'pneumonia', the evidence negates it"
    evidence = "A chest cold does not usually turn into pneumonia."
    label, reason, _ = _one(
        primitives, "It is uncommon for a chest cold to turn into pneumonia, but it is possible.", evidence
    )
    assert reason != "incorrect"
    label, reason, support = _one(primitives, "A chest cold can turn into pneumonia.", evidence)
    assert (label, reason) == ("partial", "ambiguous")
    assert support == 0.5


# --- what is done about a shared problem, negated on one side ---------------------------------


def test_a_negated_procedure_for_the_same_problem_is_a_contradiction(primitives: OfflinePrimitives) -> None:
    # was entailed (support 1.00): only the shared problem's polarity was compared
    for claim, evidence in [
        ("A sprained wrist needs surgery.", "A sprained wrist does not need surgery."),
        ("A sprained wrist does not need surgery.", "A sprained wrist needs surgery."),
        ("The stable fracture requires casting.", "The stable fracture does not require casting."),
    ]:
        label, reason, _ = _one(primitives, claim, evidence)
        assert (label, reason) == ("not_entailed", "incorrect"), (claim, evidence)


def test_advice_against_a_test_contradicts_advice_for_it(primitives: OfflinePrimitives) -> None:
    # was entailed (support 0.65)
    label, reason, _ = _one(primitives, "A colonoscopy is recommended.", "A colonoscopy is not recommended.")
    assert (label, reason) == ("not_entailed", "incorrect")


def test_the_same_negated_procedure_is_still_entailed(primitives: OfflinePrimitives) -> None:
    label, _, _ = _one(
        primitives,
        "A sprained wrist does not need surgery.",
        "Surgery is not needed: a sprained wrist does not need surgery.",
    )
    assert label == "entailed"
    label, reason, _ = _one(
        primitives,
        "The wrist sprain was treated.",
        "The wrist sprain was treated with a splint, not surgery.",
    )
    assert reason != "incorrect"
