"""Sentence and claim splitting on clinical text."""

from __future__ import annotations

import pytest

from clineval.nlp.sentences import (
    is_section_header,
    split_claims,
    split_sentences,
    split_sentences_with_sections,
)


def test_clinical_abbreviations_do_not_split() -> None:
    text = (
        "Pt is a 65 y.o. male w/ hx of HTN. He got 5 mg i.v. at 3 p.m. Dr. Smith saw him. "
        "Creatinine 1.8 mg/dL vs. 1.2 at baseline."
    )
    assert split_sentences(text) == [
        "Pt is a 65 y.o. male w/ hx of HTN.",
        "He got 5 mg i.v. at 3 p.m.",
        "Dr. Smith saw him.",
        "Creatinine 1.8 mg/dL vs. 1.2 at baseline.",
    ]


def test_missing_space_after_full_stop() -> None:
    assert split_sentences("He was stable.Discharged home on aspirin.") == [
        "He was stable.",
        "Discharged home on aspirin.",
    ]


def test_headers_bullets_and_numbered_lists() -> None:
    note = (
        "HISTORY OF PRESENT ILLNESS\n\nThe patient reports knee pain.\n\n"
        "ASSESSMENT AND PLAN\n\n1. Hypertension.\n2. Type 2 diabetes, on metformin.\n"
        "• Respiratory: Clear to auscultation.\n- No edema.\n"
        "CHIEF COMPLAINT: Cough."
    )
    sentences = split_sentences_with_sections(note)
    assert [s.text for s in sentences] == [
        "The patient reports knee pain.",
        "Hypertension.",
        "Type 2 diabetes, on metformin.",
        "Respiratory: Clear to auscultation.",
        "No edema.",
        "Cough.",
    ]
    assert sentences[0].section == "HISTORY OF PRESENT ILLNESS"
    assert sentences[1].section == "ASSESSMENT AND PLAN" and sentences[1].bullet
    assert sentences[-1].section == "CHIEF COMPLAINT"


def test_hard_wrapped_paragraph_is_joined() -> None:
    assert split_sentences("The patient has a long history of\nhypertension and diabetes.") == [
        "The patient has a long history of hypertension and diabetes."
    ]


@pytest.mark.parametrize(
    ("line", "header"),
    [
        ("HISTORY OF PRESENT ILLNESS", True),
        ("Assessment and Plan:", True),
        ("PHYSICAL EXAM", True),
        ("NO ACUTE CARDIOPULMONARY PROCESS", False),
        ("The patient is well.", False),
        ("BP 120/80", False),
    ],
)
def test_section_headers(line: str, header: bool) -> None:
    assert is_section_header(line) is header


def test_empty_text() -> None:
    assert split_sentences("") == []
    assert split_sentences("   \n\n ") == []


def test_claims_split_on_semicolon_and_lists() -> None:
    assert split_claims("No evidence of pneumothorax; small left effusion.") == [
        "No evidence of pneumothorax.",
        "Small left effusion.",
    ]
    assert split_claims("The patient denies nausea, vomiting, and diarrhea.") == [
        "The patient denies nausea.",
        "The patient denies vomiting.",
        "The patient denies diarrhea.",
    ]
    assert split_claims("BP 120/80, HR 72, RR 16, and temperature 98.6 F.") == [
        "BP 120/80.",
        "HR 72.",
        "RR 16.",
        "Temperature 98.6 F.",
    ]


def test_claims_split_coordinated_clauses_with_their_subject() -> None:
    assert split_claims("He denies fever, but he felt a little warm.") == [
        "He denies fever.",
        "He felt a little warm.",
    ]
    assert split_claims("The patient denies chest pain but endorses shortness of breath.") == [
        "The patient denies chest pain.",
        "The patient endorses shortness of breath.",
    ]
    assert split_claims("His chest x-ray was unremarkable and he has received both doses.") == [
        "His chest x-ray was unremarkable.",
        "He has received both doses.",
    ]


def test_claims_keep_what_is_not_safe_to_split() -> None:
    # Two-item coordination, a thousands separator, and "and" inside a noun phrase stay whole.
    assert split_claims("He has pain in the left knee and right hip.") == [
        "He has pain in the left knee and right hip."
    ]
    assert split_claims("Take metformin 1,000 mg, lisinopril 20 mg, and atorvastatin 40 mg daily.") == [
        "Take metformin 1,000 mg, lisinopril 20 mg, and atorvastatin 40 mg daily."
    ]
    assert split_claims("Is it safe?") == ["Is it safe?"]


def test_demographic_opener_becomes_its_own_claim() -> None:
    claims = split_claims(
        "Andrew Campbell is a 59-year-old male with a past medical history significant for depression, "
        "type 2 diabetes, and hypertension."
    )
    assert claims == [
        "Andrew Campbell is a 59-year-old male.",
        "Andrew Campbell has a past medical history significant for depression.",
        "Andrew Campbell has a past medical history significant for type 2 diabetes.",
        "Andrew Campbell has a past medical history significant for hypertension.",
    ]


def test_generic_labels_are_dropped_from_claims() -> None:
    assert split_claims("Medical Reasoning: I believe he has a viral syndrome.") == [
        "I believe he has a viral syndrome."
    ]
    # A body-system label carries meaning and stays.
    assert split_claims("Respiratory: Endorses cough.") == ["Respiratory: Endorses cough."]


# --- claims keep their verb, their object and their coordinated units ---------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        "She was referred to cardiology, but only once or twice.",
        "He uses his inhaler two or three times a week.",
        "She drinks alcohol two, three, or four times a month.",
        "She takes either ibuprofen or acetaminophen for the headaches.",
        "Start melatonin between 3 and 5 mg at bedtime.",
        "He has both asthma and eczema.",
        "His mother and his sister have migraines.",
        "He walks his dog once or twice a day, swims, and bikes.",
        "There is decreased radial, ulnar, and brachial sensation.",
        "He takes lisinopril as well as metformin.",
    ],
)
def test_units_and_non_lists_stay_whole(sentence: str) -> None:
    # A coordinated quantifier, a correlative pair, a coordinated subject, coordinated verbs
    # and describing words sharing one noun are not lists of claims.
    assert split_claims(sentence) == [sentence]


def test_no_claim_loses_the_object_of_its_preposition() -> None:
    claims = split_claims("She was sent to cardiology, but only once or twice.")
    assert claims == ["She was sent to cardiology, but only once or twice."]
    assert not any(claim.endswith(("to.", "to twice.", "but only once.")) for claim in claims)


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        (
            "She has swelling in her ankles, knees, and wrists.",
            [
                "She has swelling in her ankles.",
                "She has swelling in her knees.",
                "She has swelling in her wrists.",
            ],
        ),
        (
            "He was evaluated by neurology, rheumatology, and dermatology.",
            [
                "He was evaluated by neurology.",
                "He was evaluated by rheumatology.",
                "He was evaluated by dermatology.",
            ],
        ),
        (
            "She was referred to physical therapy, to orthopedics, and to pain management.",
            [
                "She was referred to physical therapy.",
                "She was referred to orthopedics.",
                "She was referred to pain management.",
            ],
        ),
        (
            "Her medications are amlodipine, atorvastatin, as well as aspirin.",
            [
                "Her medications are amlodipine.",
                "Her medications are atorvastatin.",
                "Her medications are aspirin.",
            ],
        ),
        (
            "Denies numbness or tingling in his hands, feet, or face.",
            [
                "Denies numbness or tingling in his hands.",
                "Denies numbness or tingling in his feet.",
                "Denies numbness or tingling in his face.",
            ],
        ),
        (
            "She presents complaining of blood in her urine, flank pain, and fever.",
            [
                "She presents complaining of blood in her urine.",
                "She presents complaining of flank pain.",
                "She presents complaining of fever.",
            ],
        ),
        (
            "The pupils are equal, round, and reactive to light.",
            ["The pupils are equal.", "The pupils are round.", "The pupils are reactive to light."],
        ),
        (
            "He reports pain once or twice a day, and he rates it 6 out of 10.",
            ["He reports pain once or twice a day.", "He rates it 6 out of 10."],
        ),
        (
            "Exam shows edema, erythema, and petechiae over the face, neck, and arms.",
            [
                "Exam shows edema.",
                "Exam shows erythema.",
                "Exam shows petechiae over the face.",
                "Exam shows petechiae over the neck.",
                "Exam shows petechiae over the arms.",
            ],
        ),
        (
            "Her symptoms include dry mouth and eyes, fatigue, and joint pain.",
            [
                "Her symptoms include dry mouth and eyes.",
                "Her symptoms include fatigue.",
                "Her symptoms include joint pain.",
            ],
        ),
    ],
)
def test_lists_expand_with_their_lead_in(sentence: str, expected: list[str]) -> None:
    assert split_claims(sentence) == expected


def test_a_list_after_its_quantifier_keeps_the_quantifier_whole() -> None:
    claims = split_claims("He takes ibuprofen once or twice a day for pain, stiffness, and swelling.")
    assert claims == [
        "He takes ibuprofen once or twice a day for pain.",
        "He takes ibuprofen once or twice a day for stiffness.",
        "He takes ibuprofen once or twice a day for swelling.",
    ]


def test_an_elided_subject_is_lent_or_the_clause_is_not_split() -> None:
    # "A ..." / "An ..." subjects lend themselves to the clause after "but".
    assert split_claims("A migraine attack typically lasts from 4 to 72 hours but can also last longer.") == [
        "A migraine attack typically lasts from 4 to 72 hours.",
        "A migraine attack can also last longer.",
    ]
    assert split_claims("An MRI was performed but showed no abnormality.") == [
        "An MRI was performed.",
        "An MRI showed no abnormality.",
    ]
    # Without a subject to lend, no claim may start on its verb ("Can also last longer.").
    for sentence in (
        "Most cases resolve within days but can also persist.",
        "Over time, the rash fades but may recur.",
    ):
        assert not any(claim.split()[0].lower() in {"can", "may"} for claim in split_claims(sentence))
