"""A small hand-written development set of clinical claim/evidence pairs.

Each case: (evidence, claim, expected label, expected reason). Written for this project
to cover what the offline judge must get right: negation, changed numbers and units,
laterality, dosing frequency, another drug, dates, experiencer, hedging, partial support
of a multi-part claim, abbreviations and paraphrase, and unrelated claims.
"""

from __future__ import annotations

CXR = "Chest X-ray: small left apical pneumothorax. No pleural effusion. Heart size is normal."
MEDS = (
    "Medications: lisinopril 20 mg once daily, metformin 500 mg twice daily, atorvastatin 40 mg at bedtime."
)
HPI = (
    "Patient is a 67-year-old woman with a history of hypertension, type 2 diabetes, and COPD. "
    "She presents with shortness of breath for 3 days. BP 150/92. Denies chest pain. "
    "Possible community-acquired pneumonia in the right lower lobe. Mother had breast cancer."
)
NPO = "Patient is NPO after midnight for the procedure tomorrow."
KNEE = "Right knee pain resolved with physical therapy. She walks 2 miles a day."
SCOPE = "Colonoscopy on 03/12/2021 showed two benign polyps, which were removed."
SKI = "She injured her right knee skiing. Pain is 7/10."
LEXAPRO = (
    "Lexapro is a medication that belongs to a class of drugs called SSRIs. It is used to treat depression."
)

DEV_SET: list[tuple[str, str, str, str | None]] = [
    # negation
    (CXR, "No evidence of pneumothorax.", "not_entailed", "incorrect"),
    (CXR, "There is a small left pneumothorax.", "entailed", None),
    (CXR, "No pleural effusion.", "entailed", None),
    (CXR, "There is a large pleural effusion.", "not_entailed", "incorrect"),
    (HPI, "She reports chest pain.", "not_entailed", "incorrect"),
    (HPI, "She denies chest pain.", "entailed", None),
    # laterality
    (CXR, "Small right pneumothorax.", "not_entailed", "incorrect"),
    (KNEE, "Left knee pain resolved.", "not_entailed", "incorrect"),
    # laterality written after what it qualifies, in the claim or in the evidence
    (CXR, "A pneumothorax was detected on the right.", "not_entailed", "incorrect"),
    (CXR, "A right pneumothorax was seen.", "not_entailed", "incorrect"),
    ("Knee pain on the right side.", "Left knee pain.", "not_entailed", "incorrect"),
    ("Knee pain on the right side.", "Right knee pain.", "entailed", None),
    # numbers, units, frequency, drug
    (MEDS, "He takes lisinopril 20 mg daily.", "entailed", None),
    (MEDS, "Lisinopril 5 mg daily.", "not_entailed", "incorrect"),
    (MEDS, "Metformin 500 mg twice a day.", "entailed", None),
    (MEDS, "Metformin 0.5 g BID.", "entailed", None),
    (MEDS, "Metformin 500 mg three times daily.", "not_entailed", "incorrect"),
    (MEDS, "He takes losartan 20 mg daily.", "not_entailed", "incorrect"),
    (MEDS, "He takes atorvastatin.", "entailed", None),
    (MEDS, "He takes aspirin 81 mg daily.", "not_entailed", "missing"),
    (HPI, "Blood pressure 150/92.", "entailed", None),
    (HPI, "BP 130/80.", "not_entailed", "incorrect"),
    (HPI, "She is a 67-year-old woman.", "entailed", None),
    (HPI, "She is 76 years old.", "not_entailed", "incorrect"),
    (HPI, "Shortness of breath for 3 weeks.", "not_entailed", "incorrect"),
    (SCOPE, "Colonoscopy on 03/12/2021 showed benign polyps.", "entailed", None),
    (SCOPE, "Colonoscopy in 2020 showed benign polyps.", "not_entailed", "incorrect"),
    (SCOPE, "Colonoscopy showed three polyps.", "not_entailed", "incorrect"),
    # abbreviations and paraphrase
    (HPI, "The patient has HTN and DM.", "entailed", None),
    (HPI, "She complains of SOB.", "entailed", None),
    (NPO, "Nothing by mouth after midnight.", "entailed", None),
    (LEXAPRO, "Escitalopram is an SSRI used for depression.", "entailed", None),
    # partial support, hedging, status, experiencer
    # one item of the list replaced by another problem in the same slot (COPD -> asthma)
    (HPI, "She has a history of hypertension, diabetes, and asthma.", "not_entailed", "incorrect"),
    (HPI, "She has a history of hypertension, diabetes, and anemia.", "not_entailed", "incorrect"),
    (HPI, "She has a history of hypertension and diabetes.", "entailed", None),
    (
        MEDS,
        "He takes metformin 500 mg twice daily and insulin glargine 20 units at night.",
        "partial",
        "missing",
    ),
    (HPI, "She has pneumonia.", "partial", "ambiguous"),
    (KNEE, "She has ongoing right knee pain.", "partial", "ambiguous"),
    (HPI, "The patient has breast cancer.", "not_entailed", "incorrect"),
    # details that look like conflicts but are not
    (SKI, "She denies any other injuries.", "not_entailed", "missing"),
    (SKI, "Her pain is 4 out of 10.", "not_entailed", "incorrect"),
    ("Pain is severe on a scale of 1 to 10.", "Her pain is 9 out of 10.", "partial", "missing"),
    ("She will start naproxen 500 mg twice daily.", "She has tried ibuprofen.", "not_entailed", "missing"),
    ("Left ankle pain.", "Denies left calf pain.", "not_entailed", "missing"),
    ("Migraine attacks last 4 to 72 hours.", "A migraine lasts at least 4 hours.", "entailed", None),
    (
        "Migraine attacks last 4 to 72 hours.",
        "A migraine attack lasts 100 hours.",
        "not_entailed",
        "incorrect",
    ),
    (
        "He denies any dizziness or visual disturbances.",
        "Neurological: Reports dizziness.",
        "not_entailed",
        "incorrect",
    ),
    # an example list: another drug is missing from it, not a contradiction ("UTI" is there)
    (
        "UTI antibiotics include nitrofurantoin and fosfomycin.",
        "Ciprofloxacin treats UTI.",
        "partial",
        "missing",
    ),
    # not there
    (CXR, "There is a rib fracture.", "not_entailed", "missing"),
    (HPI, "She is pregnant.", "not_entailed", "missing"),
    (KNEE, "The patient takes warfarin for atrial fibrillation.", "not_entailed", "missing"),
]
