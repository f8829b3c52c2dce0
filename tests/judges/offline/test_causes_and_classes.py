"""check_facts: causes (pathogen classes, trauma), a negated cause-effect relation, and
drug classes named three ways.

Texts written for these tests; the verdicts before the change are in the comments.
"""

from __future__ import annotations

import pytest
from tests.judges.offline.verdicts import label_and_reason as _one

from clineval.judges.offline import OfflinePrimitives

# --- pathogen classes ------------------------------------------------------------------------


def test_another_class_of_pathogen_is_a_substitution(primitives: OfflinePrimitives) -> None:
    # was entailed (support 0.75): "virus" was an ordinary word close to "bacteria"
    assert _one(
        primitives, "Her pneumonia was caused by a virus.", "Her pneumonia was caused by bacteria."
    ) == ("not_entailed", "incorrect")
    assert _one(primitives, "The otitis is bacterial.", "The otitis is most likely viral.") == (
        "not_entailed",
        "incorrect",
    )


def test_a_pathogen_class_the_evidence_does_not_name_is_missing(primitives: OfflinePrimitives) -> None:
    # was entailed: the sentences share "infections" and "respiratory"
    label, reason = _one(
        primitives,
        "Chest infections in children are mostly caused by viruses.",
        "Chest infections in children spread easily in nurseries and schools.",
    )
    assert label != "entailed"
    assert reason != "incorrect"


def test_a_pathogen_class_named_as_noun_or_adjective_matches(primitives: OfflinePrimitives) -> None:
    label, _ = _one(primitives, "Croup is caused by a virus.", "Croup is a viral illness of young children.")
    assert label == "entailed"


def test_trauma_as_a_cause_must_be_stated(primitives: OfflinePrimitives) -> None:
    # was entailed: "trauma" was an ordinary word and the rest of the claim matched
    label, reason = _one(
        primitives, "Neck pain can be caused by trauma.", "Neck pain has many possible causes."
    )
    assert label != "entailed"
    assert reason == "missing"


def test_status_migrainosus_is_not_a_migraine(primitives: OfflinePrimitives) -> None:
    # was entailed (support 0.81): "status" was a low-weight word and "migrainosus" matched
    # "migraine" as a longer form of the same stem
    label, _ = _one(
        primitives,
        "A migraine that lasts more than three days is called status migrainosus.",
        "A migraine usually lasts four hours to three days.",
    )
    assert label != "entailed"


# --- a negated relation ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        # was not_entailed/missing: "one text negates what the other asserts, about something else"
        (
            "Gastritis is not associated with back pain.",
            "Gastritis can cause back pain after meals.",
        ),
        (
            "Tonsillitis does not lead to ear pain.",
            "Tonsillitis can cause ear pain and fever.",
        ),
    ],
)
def test_denying_a_relation_the_evidence_states_is_a_contradiction(
    primitives: OfflinePrimitives, claim: str, evidence: str
) -> None:
    assert _one(primitives, claim, evidence) == ("not_entailed", "incorrect")


def test_the_same_relation_worded_otherwise_is_still_entailed(primitives: OfflinePrimitives) -> None:
    assert _one(
        primitives,
        "Gastritis is associated with back pain.",
        "Gastritis can cause back pain after meals.",
    ) == ("entailed", None)


def test_a_negation_about_another_symptom_is_not_a_contradiction(primitives: OfflinePrimitives) -> None:
    label, reason = _one(
        primitives,
        "Gastritis is not associated with fever.",
        "Gastritis can cause back pain after meals.",
    )
    assert reason != "incorrect"
    assert label != "entailed"


# --- one drug class, three names ---------------------------------------------------------------


@pytest.mark.parametrize(
    "evidence",
    [
        "Anti-seizure drugs can reduce how often migraines occur.",
        "Antiepileptic drugs can reduce how often migraines occur.",
        # a drug of the class: the claim about the class is entailed
        "Topiramate can reduce how often migraines occur.",
    ],
)
def test_anticonvulsant_antiseizure_and_antiepileptic_are_one_class(
    primitives: OfflinePrimitives, evidence: str
) -> None:
    # was partial/missing ("not found: anticonvulsant")
    assert _one(primitives, "Anticonvulsants can reduce how often migraines occur.", evidence) == (
        "entailed",
        None,
    )


# --- a negation about an extra dose ------------------------------------------------------------


def test_no_double_dose_does_not_deny_the_next_dose(primitives: OfflinePrimitives) -> None:
    # was not_entailed/incorrect: "the claim asserts 'dose', the evidence negates it"
    label, reason = _one(
        primitives,
        "After a missed dose of the inhaler, the next dose is taken at the usual time.",
        "If you forget a dose of the inhaler, skip it and take the next dose at the usual time. "
        "Do not take a double dose.",
    )
    assert reason != "incorrect"
    assert label == "entailed"


def test_a_double_dose_is_still_denied_by_no_double_dose(primitives: OfflinePrimitives) -> None:
    assert _one(
        primitives,
        "Take a double dose of the inhaler to make up for a missed one.",
        "Do not take a double dose of the inhaler to make up for a missed one.",
    ) == ("not_entailed", "incorrect")


# --- advice reversed -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        # each was entailed (support 1.00): advice against a drug was not a polarity
        ("Give paracetamol for the fever.", "Do not give paracetamol for the fever."),
        ("Do not give paracetamol for the fever.", "Give paracetamol for the fever."),
        ("Naproxen should be taken for the back pain.", "Naproxen should not be taken for the back pain."),
        ("Use the salbutamol inhaler at night.", "Do not use the salbutamol inhaler at night."),
        ("Avoid aspirin for the headache.", "Aspirin can be used for the headache."),
    ],
)
def test_advice_against_what_the_other_text_advises_is_a_contradiction(
    primitives: OfflinePrimitives, claim: str, evidence: str
) -> None:
    assert _one(primitives, claim, evidence) == ("not_entailed", "incorrect")


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        # the advice against is about something the claim does not say
        ("Naproxen should be taken with food.", "Do not take naproxen on an empty stomach."),
        ("Give paracetamol for the fever.", "Paracetamol helps the fever. Do not give more than 4 doses."),
    ],
)
def test_advice_against_something_else_is_not_a_contradiction(
    primitives: OfflinePrimitives, claim: str, evidence: str
) -> None:
    assert _one(primitives, claim, evidence)[1] != "incorrect"


# --- an infection named ----------------------------------------------------------------------


def test_a_named_infection_is_an_infection(primitives: OfflinePrimitives) -> None:
    # was partial/missing ("not found: infection")
    assert _one(
        primitives,
        "Infections such as oral thrush can make the tongue look white.",
        "A white tongue can be a sign of oral thrush.",
    ) == ("entailed", None)


def test_cause_for_concern_is_not_causation(primitives: OfflinePrimitives) -> None:
    # a claim naming a pathogen class the span lacks is not contradicted by "isn't cause
    # for concern" (the span is not about the same thing)
    label, reason = _one(
        primitives,
        "Sinusitis is usually caused by a viral infection.",
        "A single episode of sinusitis usually isn't cause for concern.",
    )
    assert reason != "incorrect"
    assert label != "entailed"


# --- durations without a number ----------------------------------------------------------------


def test_a_few_days_agrees_with_a_range_inside_it(primitives: OfflinePrimitives) -> None:
    # was partial/missing ("not found: a quantity")
    assert _one(
        primitives,
        "Oxymetazoline nasal spray should not be used for more than 2-3 days.",
        "Do not use oxymetazoline nasal spray for more than a few days.",
    ) == ("entailed", None)


def test_a_time_frame_the_evidence_does_not_give_is_missing(primitives: OfflinePrimitives) -> None:
    # was entailed: "within a few weeks" had no term at all
    label, reason = _one(
        primitives,
        "Sertraline improves the mood of people with depression within a few weeks.",
        "Sertraline improves the mood of people with depression.",
    )
    assert (label, reason) == ("partial", "missing")


def test_a_few_days_against_three_weeks_is_a_conflict(primitives: OfflinePrimitives) -> None:
    assert _one(
        primitives,
        "The rash of roseola fades within a few days.",
        "The rash of roseola fades within 3 weeks.",
    ) == ("not_entailed", "incorrect")


# --- both texts deny, attached to different words ----------------------------------------------


def test_should_not_be_used_for_long_is_do_not_use_for_long(primitives: OfflinePrimitives) -> None:
    # was not_entailed/incorrect: "the claim asserts 'oxymetazoline', the evidence negates it"
    assert _one(
        primitives,
        "Oxymetazoline nasal spray should not be used for more than 3 days.",
        "Do not use oxymetazoline nasal spray for more than 3 days.",
    ) == ("entailed", None)


def test_allowing_what_the_evidence_advises_against_is_still_a_conflict(
    primitives: OfflinePrimitives,
) -> None:
    assert _one(
        primitives,
        "Oxymetazoline nasal spray can be used for more than 3 days.",
        "Do not use oxymetazoline nasal spray for more than 3 days.",
    ) == ("not_entailed", "incorrect")


# --- words ---------------------------------------------------------------------------------------


def test_a_hyphenated_word_broken_by_a_space_is_one_word(primitives: OfflinePrimitives) -> None:
    # was not_entailed/missing: "flu- like" (a line break in the source) was not "flu-like"
    assert _one(
        primitives,
        "Shingles can start with flu-like symptoms.",
        "Shingles can start with flu- like symptoms such as a fever and a headache.",
    ) == ("entailed", None)


def test_diagnosis_is_not_a_disease(primitives: OfflinePrimitives) -> None:
    # was partial/missing ("not found: diagnosis"): "-osis" made "diagnosis" a clinical term
    assert (
        _one(
            primitives,
            "If memory loss is new, see your doctor for a diagnosis.",
            "See your doctor if memory loss is new.",
        )[0]
        == "entailed"
    )


def test_fatty_liver_is_a_liver_disease_by_name(primitives: OfflinePrimitives) -> None:
    assert _one(
        primitives,
        "People with hepatic steatosis should limit alcohol.",
        "People with a fatty liver should limit alcohol.",
    ) == ("entailed", None)


# --- word forms ----------------------------------------------------------------------------------


def test_painless_is_the_opposite_of_pain(primitives: OfflinePrimitives) -> None:
    # was entailed (support 1.00): "painless" matched "pain" as a longer form of it
    assert _one(
        primitives,
        "The swelling on his neck is painless.",
        "He has a swelling on his neck that causes pain.",
    ) == ("not_entailed", "incorrect")


def test_a_compound_is_not_a_form_of_its_first_word(primitives: OfflinePrimitives) -> None:
    # was entailed: "mouth" matched "mouthwash"
    label, _ = _one(
        primitives,
        "Breathing through the mouth can dry the lips.",
        "Using mouthwash can dry the lips.",
    )
    assert label != "entailed"


def test_a_common_word_in_the_slot_is_no_rival_diagnosis(primitives: OfflinePrimitives) -> None:
    # was not_entailed/incorrect: "substitution (diagnosis): 'exertion' ..., 'climb' ..."
    _, reason = _one(
        primitives,
        "He is short of breath on exertion.",
        "He gets short of breath when he climbs stairs.",
    )
    assert reason != "incorrect"


# --- organisms by genus and species ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        # was partial/missing: "Escherichia coli" was two words, so two rivals (a list)
        ("The wound swab grew Klebsiella.", "The wound swab grew Escherichia coli."),
        ("Blood cultures grew Staphylococcus aureus.", "Blood cultures grew Staphylococcus epidermidis."),
    ],
)
def test_another_organism_by_genus_and_species_is_a_substitution(
    primitives: OfflinePrimitives, claim: str, evidence: str
) -> None:
    assert _one(primitives, claim, evidence) == ("not_entailed", "incorrect")


def test_a_species_epithet_is_not_a_diagnosis(primitives: OfflinePrimitives) -> None:
    # was entailed: "pneumoniae" was read as "pneumonia"
    label, _ = _one(primitives, "The boy has pneumonia.", "His throat swab grew Streptococcus pneumoniae.")
    assert label != "entailed"


def test_the_genus_is_entailed_by_genus_and_species(primitives: OfflinePrimitives) -> None:
    assert _one(primitives, "The sputum grew Klebsiella.", "The sputum grew Klebsiella pneumoniae.") == (
        "entailed",
        None,
    )
    assert _one(primitives, "The urine grew E. coli.", "The urine grew Escherichia coli.") == (
        "entailed",
        None,
    )
