"""A tiny, deterministic example agent for the clineval quickstart.

Everything here is synthetic: the patients, their records, the guidance snippets and the
patient leaflet were written for this example and describe no real person. Nothing is
clinically validated; do not use any of it for patient care.

The agent has three modes, chosen from the wording of its input:

* **Summary requests** (the input starts with "Summarise"/"Summarize"): an extractive
  summariser that keeps the few sentences richest in diagnosis and treatment keywords.
  It returns an empty trajectory.
* **Patient questions** (written in the first person, "I", "me" or "my", and naming no
  patient with a title such as "Mr." or "Mrs."; see :func:`is_patient_question`): a
  follow-up assistant for patients after cataract surgery. A keyword-overlap retriever
  picks the :data:`TOP_K` best passages of a synthetic leaflet (:data:`LEAFLET`), which
  are returned as ``contexts``; the answer is an acknowledgement, one or two sentences of
  the best passage and, unless the matter is urgent, a follow-up question. When the best
  passage shares fewer than :data:`MIN_OVERLAP` content words with the question, the
  agent declines and points to the care team. The trajectory is empty.
* **Tool requests** (anything else): a keyword-matching planner that finds the patient,
  calls the tools the request seems to need against :data:`PATIENTS`, and composes an
  answer from the tool outputs, ending with a one-word ``Recommendation:`` label where a
  rule applies.

The agent is **deliberately imperfect**, so that the quickstart's metrics have something
to find. Each planted flaw is marked ``# DELIBERATE FLAW`` below; in short:

* interaction checks are triggered by a keyword list that lacks "prescribe" (skips a call);
* one get_vitals call is made per vital sign mentioned, never deduplicated (repeated call);
* "neutrophil" is mapped to the wrong laboratory test, ``wbc`` (wrong argument);
* there is no "CT chest" modality, so chest CTs are requested as plain ``CT`` (wrong argument);
* the plan runs in a fixed stage order, labs before medications, whatever the request
  says (different order);
* "order a repeat if ..." orders the test without checking the condition (extra call);
* the levothyroxine rule only increases the dose when TSH is above 10 mIU/L (wrong answer
  with a correct trajectory);
* a patient missing from the database makes ``search_patient`` raise ``LookupError``,
  which the agent does not catch (the run fails);
* the summariser ignores demographics and caps its output, so summaries miss facts;
* patient questions: a stale "quick answer" gives the wrong steroid drop frequency (an
  informative sentence no retrieved passage supports);
* patient questions: driving is always declined as a "legal" topic, though the leaflet
  answers it (over-refusal);
* patient questions: retrieval matches exact words only, so "swimming" misses the
  passage that says "swim" and the answer comes from an unrelated passage (irrelevant
  context);
* patient questions: requests are never screened, so a request for steroid drops without
  a prescription is answered instead of declined (missed refusal).

Usage::

    from agent import run_agent
    result = run_agent("What was Mr. Okafor's last potassium ...?")
    result["response"], result["trajectory"]
    run_agent("How often should I put in my steroid eye drops?")["contexts"]
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

#: The date the synthetic record system treats as "today".
TODAY = "2025-03-14"

# ---------------------------------------------------------------------------------------
# Synthetic patient database
# ---------------------------------------------------------------------------------------


def _lab(date: str, value: float | str, unit: str, ref: str, flag: str | None = None) -> dict[str, Any]:
    return {"date": date, "value": value, "unit": unit, "reference_range": ref, "flag": flag}


def _med(drug: str, dose: str, frequency: str, route: str = "oral") -> dict[str, Any]:
    return {"drug": drug, "dose": dose, "route": route, "frequency": frequency}


def _obs(
    date: str, weight_kg: float, bp: str | None, hr: int, rr: int, spo2: int, temp_c: float
) -> dict[str, Any]:
    return {
        "date": date,
        "weight_kg": weight_kg,
        "bp": bp,
        "hr": hr,
        "rr": rr,
        "spo2": spo2,
        "temp_c": temp_c,
    }


def _scan(date: str, modality: str, findings: str, impression: str) -> dict[str, Any]:
    return {"date": date, "modality": modality, "findings": findings, "impression": impression}


PATIENTS: dict[str, dict[str, Any]] = {
    "P001": {
        "name": "Emeka Okafor",
        "age": 68,
        "sex": "male",
        "problems": ["hypertension", "chronic kidney disease G3b", "gout"],
        "labs": {
            "potassium": [
                _lab("2025-03-12", 6.2, "mmol/L", "3.5-5.1", "H"),
                _lab("2025-01-20", 5.3, "mmol/L", "3.5-5.1", "H"),
            ],
            "creatinine": [
                _lab("2025-03-12", 1.7, "mg/dL", "0.7-1.3", "H"),
                _lab("2025-01-20", 1.5, "mg/dL", "0.7-1.3", "H"),
            ],
            "sodium": [_lab("2025-03-12", 138, "mmol/L", "135-145")],
        },
        "medications": [
            _med("lisinopril", "20 mg", "once daily"),
            _med("amlodipine", "10 mg", "once daily"),
            _med("allopurinol", "200 mg", "once daily"),
        ],
        "vitals": [_obs("2025-03-12", 91.0, "138/82", 74, 14, 97, 36.6)],
        "imaging": [],
    },
    "P002": {
        "name": "Margaret Lindqvist",
        "age": 79,
        "sex": "female",
        "problems": [
            "atrial fibrillation",
            "heart failure with preserved ejection fraction",
            "hypercholesterolaemia",
            "community-acquired pneumonia (current)",
        ],
        "labs": {
            "INR": [_lab("2025-03-10", 2.4, "", "target 2.0-3.0")],
            "creatinine": [_lab("2025-03-13", 1.0, "mg/dL", "0.5-1.1")],
            "CRP": [_lab("2025-03-13", 96, "mg/L", "<5", "H")],
        },
        "medications": [
            _med("warfarin", "3 mg", "once daily (evening), adjusted to INR"),
            _med("bisoprolol", "2.5 mg", "once daily"),
            _med("atorvastatin", "40 mg", "once daily at night"),
            _med("furosemide", "40 mg", "once daily (morning)"),
        ],
        "vitals": [_obs("2025-03-13", 64.2, "126/74", 88, 20, 94, 38.0)],
        "imaging": [
            _scan(
                "2025-03-13",
                "chest X-ray",
                "Patchy consolidation in the right lower zone. Heart size at the upper limit of "
                "normal. No effusion.",
                "Right lower lobe consolidation in keeping with pneumonia.",
            ),
        ],
    },
    "P003": {
        "name": "Rahul Desai",
        "age": 54,
        "sex": "male",
        "problems": ["type 2 diabetes", "hypertension", "chronic kidney disease"],
        "labs": {
            "creatinine": [
                _lab("2025-03-05", 1.9, "mg/dL", "0.7-1.3", "H"),
                _lab("2024-09-12", 1.6, "mg/dL", "0.7-1.3", "H"),
            ],
            "HbA1c": [_lab("2025-03-05", 7.1, "%", "<5.7", "H")],
            "potassium": [_lab("2025-03-05", 4.9, "mmol/L", "3.5-5.1")],
        },
        "medications": [
            _med("metformin", "1000 mg", "twice daily"),
            _med("ramipril", "10 mg", "once daily"),
            _med("atorvastatin", "20 mg", "once daily at night"),
        ],
        "vitals": [_obs("2025-03-05", 84.0, "134/80", 70, 14, 98, 36.5)],
        "imaging": [],
    },
    "P004": {
        "name": "Aisha Bello",
        "age": 34,
        "sex": "female",
        "problems": ["primary hypothyroidism (autoimmune)", "planning pregnancy"],
        "labs": {
            "TSH": [
                _lab("2025-02-27", 6.8, "mIU/L", "0.4-4.0", "H"),
                _lab("2024-08-15", 3.9, "mIU/L", "0.4-4.0"),
            ],
            "free T4": [_lab("2025-02-27", 12.5, "pmol/L", "12-22")],
        },
        "medications": [
            _med("levothyroxine", "75 micrograms", "once daily before breakfast"),
            _med("folic acid", "400 micrograms", "once daily"),
        ],
        "vitals": [_obs("2025-02-27", 67.0, "118/72", 64, 12, 99, 36.4)],
        "imaging": [],
    },
    "P005": {
        "name": "Tomasz Nowak",
        "age": 61,
        "sex": "male",
        "problems": ["ex-smoker, 40 pack-years (stopped 2019)", "mild COPD"],
        "labs": {},
        "medications": [_med("tiotropium", "18 micrograms", "once daily", route="inhaled")],
        "vitals": [_obs("2025-02-10", 79.5, "132/84", 76, 16, 95, 36.6)],
        "imaging": [
            _scan(
                "2025-02-10",
                "CT chest",
                "7 mm solid nodule in the right upper lobe with smooth margins. Mild centrilobular "
                "emphysema. No lymphadenopathy or pleural effusion. No prior imaging to compare.",
                "Solitary 7 mm solid right upper lobe nodule, indeterminate. Mild emphysema.",
            ),
            _scan(
                "2023-06-02",
                "chest X-ray",
                "Hyperinflated lungs. No focal lesion.",
                "No acute abnormality.",
            ),
        ],
    },
    "P006": {
        "name": "Grace Mensah",
        "age": 72,
        "sex": "female",
        "problems": ["heart failure with reduced ejection fraction (LVEF 30%)", "type 2 diabetes"],
        "labs": {
            "NT-proBNP": [
                _lab("2025-03-13", 4850, "pg/mL", "<125", "H"),
                _lab("2024-12-02", 1900, "pg/mL", "<125", "H"),
            ],
            "potassium": [_lab("2025-03-13", 4.6, "mmol/L", "3.5-5.1")],
            "creatinine": [_lab("2025-03-13", 1.3, "mg/dL", "0.5-1.1", "H")],
        },
        "medications": [
            _med("furosemide", "40 mg", "once daily"),
            _med("sacubitril/valsartan", "49/51 mg", "twice daily"),
            _med("bisoprolol", "5 mg", "once daily"),
            _med("spironolactone", "25 mg", "once daily"),
            _med("dapagliflozin", "10 mg", "once daily"),
        ],
        "vitals": [
            _obs("2025-03-14", 78.4, "104/66", 92, 22, 93, 36.7),
            _obs("2025-03-07", 75.9, "112/70", 78, 16, 96, 36.5),
        ],
        "imaging": [],
    },
    "P007": {
        "name": "Leo Fischer",
        "age": 6,
        "sex": "male",
        "problems": ["asthma"],
        "labs": {},
        "medications": [
            _med("beclometasone", "100 micrograms, 1 puff", "twice daily", route="inhaled via spacer"),
            _med("salbutamol", "100 micrograms, 2-4 puffs", "as needed", route="inhaled via spacer"),
            _med("montelukast", "5 mg chewable tablet", "once daily at night"),
        ],
        "vitals": [
            _obs("2025-03-11", 21.5, None, 104, 24, 96, 37.1),
            _obs("2025-01-08", 21.0, None, 96, 22, 97, 36.8),
        ],
        "imaging": [],
    },
    "P008": {
        "name": "Samuel Osei",
        "age": 45,
        "sex": "male",
        "problems": ["HIV infection, virally suppressed", "latent tuberculosis (IGRA positive)"],
        "labs": {
            "HIV viral load": [_lab("2025-01-15", "<20", "copies/mL", "undetectable")],
            "CD4": [_lab("2025-01-15", 520, "cells/uL", "500-1500")],
            "ALT": [_lab("2025-03-03", 24, "U/L", "7-56")],
        },
        "medications": [
            _med("bictegravir/emtricitabine/tenofovir alafenamide", "50/200/25 mg", "once daily"),
            _med("atorvastatin", "20 mg", "once daily at night"),
        ],
        "vitals": [_obs("2025-03-03", 77.0, "124/78", 68, 14, 99, 36.6)],
        "imaging": [
            _scan(
                "2025-03-05",
                "chest X-ray",
                "Clear lungs. No hilar lymphadenopathy. No cavitation.",
                "Normal chest radiograph; no features of active tuberculosis.",
            ),
        ],
    },
    "P009": {
        "name": "Chloe Martin",
        "age": 28,
        "sex": "female",
        "problems": [],
        "labs": {
            "urinalysis": [
                _lab(
                    "2025-03-13",
                    "nitrite positive; leukocyte esterase 2+; blood trace; protein negative",
                    "",
                    "all negative",
                    "A",
                ),
            ],
            "urine hCG": [_lab("2025-03-13", "negative", "", "negative")],
        },
        "medications": [
            _med("ethinylestradiol/levonorgestrel", "30/150 micrograms", "once daily"),
        ],
        "vitals": [_obs("2025-03-13", 61.0, "116/70", 84, 14, 99, 37.4)],
        "imaging": [],
    },
    "P010": {
        "name": "Harold Jennings",
        "age": 83,
        "sex": "male",
        "problems": ["atrial fibrillation on warfarin", "mild Alzheimer's disease"],
        "labs": {
            "INR": [
                _lab("2025-03-13", 3.6, "", "target 2.0-3.0", "H"),
                _lab("2025-02-27", 2.6, "", "target 2.0-3.0"),
            ],
            "haemoglobin": [_lab("2025-03-13", 12.9, "g/dL", "13.0-17.0", "L")],
        },
        "medications": [
            _med("warfarin", "4 mg", "once daily, adjusted to INR"),
            _med("donepezil", "10 mg", "once daily at night"),
            _med("bisoprolol", "2.5 mg", "once daily"),
        ],
        "vitals": [_obs("2025-03-13", 70.0, "148/78", 72, 16, 96, 36.4)],
        "imaging": [
            _scan(
                "2025-03-13",
                "CT head",
                "No intracranial haemorrhage. No skull fracture. Periventricular white matter low "
                "attenuation and generalised volume loss.",
                "No acute intracranial haemorrhage or fracture. Chronic small vessel ischaemic "
                "change and generalised atrophy.",
            ),
            _scan(
                "2023-11-20",
                "MRI brain",
                "Bilateral hippocampal volume loss. Scattered white matter hyperintensities.",
                "Atrophy with medial temporal predominance; small vessel disease.",
            ),
        ],
    },
    "P011": {
        "name": "Priya Raman",
        "age": 66,
        "sex": "female",
        "problems": ["metastatic colorectal adenocarcinoma (liver metastases)"],
        "labs": {
            "neutrophils": [
                _lab("2025-03-13", 0.9, "x10^9/L", "2.0-7.5", "L"),
                _lab("2025-02-21", 2.1, "x10^9/L", "2.0-7.5"),
            ],
            "wbc": [
                _lab("2025-03-13", 3.1, "x10^9/L", "4.0-11.0", "L"),
                _lab("2025-02-21", 4.6, "x10^9/L", "4.0-11.0"),
            ],
            "platelets": [
                _lab("2025-03-13", 142, "x10^9/L", "150-400", "L"),
                _lab("2025-02-21", 188, "x10^9/L", "150-400"),
            ],
            "haemoglobin": [_lab("2025-03-13", 10.8, "g/dL", "12.0-15.5", "L")],
            "creatinine": [_lab("2025-03-13", 0.8, "mg/dL", "0.5-1.1")],
        },
        "medications": [
            _med("capecitabine", "2000 mg (1250 mg/m2)", "twice daily, days 1-14 of 21-day cycle"),
            _med("ondansetron", "8 mg", "up to twice daily as needed"),
            _med("loperamide", "2 mg", "as needed for diarrhoea"),
        ],
        "vitals": [_obs("2025-03-13", 58.0, "122/76", 80, 14, 98, 36.8)],
        "imaging": [],
    },
    "P012": {
        "name": "Diego Herrera",
        "age": 59,
        "sex": "male",
        "problems": ["type 2 diabetes"],
        "labs": {
            "HbA1c": [
                _lab("2025-02-06", 7.4, "%", "<5.7", "H"),
                _lab("2024-10-30", 8.1, "%", "<5.7", "H"),
            ],
        },
        "medications": [
            _med("metformin", "1000 mg", "twice daily"),
            _med("empagliflozin", "10 mg", "once daily"),
        ],
        "vitals": [_obs("2025-02-06", 95.0, "130/82", 72, 14, 98, 36.5)],
        "imaging": [],
    },
    "P013": {
        "name": "Fatima Haddad",
        "age": 70,
        "sex": "female",
        "problems": ["COPD", "depression", "infective COPD exacerbation (current)"],
        "labs": {
            "potassium": [_lab("2025-03-13", 3.6, "mmol/L", "3.5-5.1")],
            "CRP": [_lab("2025-03-13", 58, "mg/L", "<5", "H")],
        },
        "medications": [
            _med("tiotropium", "18 micrograms", "once daily", route="inhaled"),
            _med("budesonide/formoterol", "200/6 micrograms, 2 puffs", "twice daily", route="inhaled"),
            _med("citalopram", "20 mg", "once daily"),
            _med("prednisolone", "30 mg", "once daily for 5 days (from 2025-03-13)"),
        ],
        "vitals": [_obs("2025-03-13", 55.0, "136/80", 98, 24, 90, 38.1)],
        "imaging": [
            _scan(
                "2025-03-13",
                "chest X-ray",
                "Hyperinflated lungs. No consolidation, effusion or pneumothorax.",
                "Emphysematous changes; no consolidation.",
            ),
        ],
    },
    "P014": {
        "name": "Kenji Watanabe",
        "age": 63,
        "sex": "male",
        "problems": ["NSTEMI with drug-eluting stent to the right coronary artery (2025-01)"],
        "labs": {"haemoglobin": [_lab("2025-03-03", 14.1, "g/dL", "13.0-17.0")]},
        "medications": [
            _med("aspirin", "75 mg", "once daily"),
            _med("clopidogrel", "75 mg", "once daily"),
            _med("atorvastatin", "80 mg", "once daily at night"),
            _med("ramipril", "5 mg", "once daily"),
            _med("bisoprolol", "5 mg", "once daily"),
        ],
        "vitals": [_obs("2025-03-03", 73.0, "122/74", 60, 14, 98, 36.5)],
        "imaging": [],
    },
    # DELIBERATE FLAW: no record for "Whitfield". The request about him should be answered
    # with "patient not found"; instead search_patient raises and the agent does not catch it.
}

#: Pairwise interactions by ingredient (combination products are split on "/"):
#: (drug, drug, severity, effect, advice).
_INTERACTION_TABLE: list[tuple[str, str, str, str, str]] = [
    (
        "warfarin",
        "clarithromycin",
        "major",
        "clarithromycin inhibits warfarin metabolism (CYP3A4); INR and bleeding risk rise",
        "prefer another antibiotic; if unavoidable, check INR within 3-5 days",
    ),
    (
        "atorvastatin",
        "clarithromycin",
        "major",
        "CYP3A4 inhibition raises atorvastatin levels; risk of myopathy and rhabdomyolysis",
        "withhold atorvastatin for the course of clarithromycin",
    ),
    (
        "bictegravir",
        "rifampicin",
        "contraindicated",
        "rifampicin induces CYP3A, UGT1A1 and P-gp and markedly lowers bictegravir levels; "
        "risk of virological failure and resistance",
        "do not co-administer",
    ),
    (
        "tenofovir alafenamide",
        "rifampicin",
        "contraindicated",
        "P-gp induction lowers tenofovir alafenamide levels",
        "do not co-administer",
    ),
    (
        "atorvastatin",
        "rifampicin",
        "moderate",
        "rifampicin induction lowers atorvastatin exposure",
        "monitor lipid control",
    ),
    (
        "citalopram",
        "azithromycin",
        "major",
        "additive QT prolongation; risk of torsades de pointes",
        "check a baseline ECG (QTc), potassium and magnesium, or use a non-QT-prolonging antibiotic",
    ),
    (
        "clopidogrel",
        "omeprazole",
        "major",
        "CYP2C19 inhibition reduces activation of clopidogrel",
        "avoid; use pantoprazole if a proton pump inhibitor is needed",
    ),
    (
        "clopidogrel",
        "esomeprazole",
        "major",
        "CYP2C19 inhibition reduces activation of clopidogrel",
        "avoid; use pantoprazole if a proton pump inhibitor is needed",
    ),
    (
        "aspirin",
        "clopidogrel",
        "moderate",
        "additive bleeding risk (intended dual antiplatelet therapy)",
        "continue as prescribed; consider gastroprotection",
    ),
    (
        "lisinopril",
        "spironolactone",
        "moderate",
        "additive risk of hyperkalaemia",
        "monitor potassium and renal function",
    ),
    ("warfarin", "aspirin", "major", "additive bleeding risk", "avoid unless clearly indicated"),
]

INTERACTIONS: dict[frozenset[str], dict[str, str]] = {
    frozenset({a, b}): {"severity": severity, "effect": effect, "advice": advice}
    for a, b, severity, effect, advice in _INTERACTION_TABLE
}

#: Short guidance snippets written for this example (simplified; not for clinical use).
GUIDELINES: dict[str, str] = {
    "pulmonary nodule follow-up": (
        "Incidental solid pulmonary nodule in an adult without known cancer. Under 6 mm: no "
        "routine follow-up if low risk; optional CT at 12 months if high risk. 6-8 mm: CT at "
        "6-12 months, then consider CT at 18-24 months (high risk: do both). Over 8 mm: consider "
        "CT at 3 months, PET-CT or tissue sampling. High risk includes heavy smoking history, "
        "upper lobe location and emphysema."
    ),
    "latent tuberculosis in HIV": (
        "Treat latent tuberculosis in people with HIV once active disease is excluded. "
        "Rifampicin and rifapentine must not be combined with bictegravir or tenofovir "
        "alafenamide. Options: isoniazid daily for 6-9 months with pyridoxine; or, if a rifamycin "
        "regimen is preferred, switch antiretroviral therapy with the HIV team (for example "
        "dolutegravir twice daily during rifampicin)."
    ),
    "hyperkalaemia on ACE inhibitor": (
        "Potassium 5.5-5.9 mmol/L: review diet and interacting drugs, consider halving the ACE "
        "inhibitor dose and recheck within a week. Potassium 6.0 mmol/L or more: stop the ACE "
        "inhibitor, obtain an ECG and repeat potassium urgently."
    ),
    "metformin in chronic kidney disease": (
        "eGFR 45 or more: usual dose. eGFR 30-44: do not start; if already taking it, reduce to "
        "at most 1000 mg per day and monitor renal function every 3-6 months. eGFR below 30: stop."
    ),
}

# ---------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------


def _patient(patient_id: str) -> dict[str, Any]:
    try:
        return PATIENTS[patient_id]
    except KeyError:
        raise LookupError(f"unknown patient_id {patient_id!r}") from None


def search_patient(name: str) -> dict[str, Any]:
    """Find a patient by surname or full name (case-insensitive)."""
    wanted = name.strip().lower()
    for patient_id, record in PATIENTS.items():
        full = record["name"].lower()
        if wanted in (full, full.split()[-1]):
            return {
                "patient_id": patient_id,
                "name": record["name"],
                "age": record["age"],
                "sex": record["sex"],
            }
    raise LookupError(f"search_patient: no patient named {name!r} in the record system")


def get_labs(patient_id: str, test: str) -> dict[str, Any]:
    """Results of one laboratory test, newest first (an empty list when none are on file)."""
    labs = _patient(patient_id)["labs"]
    key = next((k for k in labs if k.lower() == test.strip().lower()), None)
    return {"patient_id": patient_id, "test": test, "results": list(labs[key]) if key else []}


def get_medications(patient_id: str) -> dict[str, Any]:
    """The current medication list."""
    return {"patient_id": patient_id, "medications": list(_patient(patient_id)["medications"])}


def get_vitals(patient_id: str) -> dict[str, Any]:
    """The two most recent sets of vital signs, newest first."""
    return {"patient_id": patient_id, "readings": list(_patient(patient_id)["vitals"][:2])}


def get_imaging_report(patient_id: str, modality: str) -> dict[str, Any]:
    """The most recent imaging report whose modality starts with ``modality``."""
    wanted = modality.strip().lower()
    for report in _patient(patient_id)["imaging"]:
        if report["modality"].lower().startswith(wanted):
            return {"patient_id": patient_id, "found": True, **report}
    return {"patient_id": patient_id, "found": False, "modality": modality}


def _ingredients(drug: str) -> list[str]:
    return [part.strip().lower() for part in drug.split("/")]


def check_interactions(drugs: list[str]) -> dict[str, Any]:
    """Every known pairwise interaction among ``drugs``."""
    found: list[dict[str, Any]] = []
    for i, first in enumerate(drugs):
        for second in drugs[i + 1 :]:
            for a in _ingredients(first):
                for b in _ingredients(second):
                    entry = INTERACTIONS.get(frozenset({a, b}))
                    if entry is not None:
                        found.append({"drugs": [first, second], "ingredients": [a, b], **entry})
    return {"drugs": list(drugs), "interactions": found}


def order_test(patient_id: str, test: str) -> dict[str, Any]:
    """Place an order for a test (simulated; returns a deterministic order id)."""
    _patient(patient_id)
    slug = re.sub(r"[^a-z0-9]+", "-", test.lower()).strip("-")
    return {
        "order_id": f"ORD-{patient_id}-{slug}",
        "patient_id": patient_id,
        "test": test,
        "status": "placed",
        "date": TODAY,
    }


def calculate_egfr(creatinine_mg_dl: float, age: int, sex: str) -> dict[str, Any]:
    """eGFR by the race-free CKD-EPI 2021 creatinine equation."""
    female = sex.strip().lower() in {"female", "f", "woman"}
    kappa, alpha = (0.7, -0.241) if female else (0.9, -0.302)
    ratio = creatinine_mg_dl / kappa
    egfr = 142 * min(ratio, 1.0) ** alpha * max(ratio, 1.0) ** -1.200 * 0.9938**age
    if female:
        egfr *= 1.012
    return {"egfr": round(egfr), "unit": "mL/min/1.73m2", "equation": "CKD-EPI 2021 (creatinine)"}


def lookup_guideline(topic: str) -> dict[str, Any]:
    """A short guidance snippet for a topic (exact topic names, case-insensitive)."""
    key = next((k for k in GUIDELINES if k.lower() == topic.strip().lower()), None)
    if key is None:
        return {"topic": topic, "found": False}
    return {
        "topic": key,
        "found": True,
        "summary": GUIDELINES[key],
        "source": "synthetic example guidance - not for clinical use",
    }


#: The tool set, by name.
TOOLS: dict[str, Callable[..., dict[str, Any]]] = {
    "search_patient": search_patient,
    "get_labs": get_labs,
    "get_medications": get_medications,
    "check_interactions": check_interactions,
    "get_vitals": get_vitals,
    "get_imaging_report": get_imaging_report,
    "order_test": order_test,
    "calculate_egfr": calculate_egfr,
    "lookup_guideline": lookup_guideline,
}

# ---------------------------------------------------------------------------------------
# Planner vocabulary
# ---------------------------------------------------------------------------------------

#: Request keyword (regex) -> laboratory test name.
LAB_KEYWORDS: list[tuple[str, str]] = [
    (r"potassium|\bk\+", "potassium"),
    (r"creatinine|\begfr\b|kidney function|renal function", "creatinine"),
    (r"\btsh\b|thyroid", "TSH"),
    (r"nt-probnp|\bbnp\b", "NT-proBNP"),
    # DELIBERATE FLAW: "neutrophil" is mapped to the total white cell count, not "neutrophils".
    (r"neutrophil", "wbc"),
    (r"\bplatelet", "platelets"),
    (r"\binr\b", "INR"),
    (r"hba1c|\ba1c\b", "HbA1c"),
    (r"urinalysis|urine dip", "urinalysis"),
    (r"haemoglobin|hemoglobin|\bhb\b", "haemoglobin"),
]

#: Request keyword (regex) -> imaging modality; the first match wins.
IMAGING_KEYWORDS: list[tuple[str, str]] = [
    (r"\bct head\b|\bhead ct\b", "CT head"),
    (r"\bmri brain\b|\bbrain mri\b", "MRI brain"),
    (r"chest x-ray|\bcxr\b", "chest X-ray"),
    # DELIBERATE FLAW: no "CT chest" entry, so a chest CT is requested as the generic "CT".
    (r"\bct\b", "CT"),
]

#: Groups of vital-sign keywords; see the flaw in _plan_vitals.
VITAL_GROUPS: list[str] = [
    r"\bweight\b",
    r"blood pressure|\bbp\b",
    r"heart rate|\bpulse\b",
    r"oxygen saturation|\bspo2\b|\bsats\b",
    r"temperature|fever",
    r"\bvitals?\b|vital signs|observations",
]

#: Request keyword (regex) -> guideline topic.
GUIDELINE_KEYWORDS: list[tuple[str, str]] = [
    (r"nodule", "pulmonary nodule follow-up"),
    (r"\btb\b|tuberculosis", "latent tuberculosis in HIV"),
    (r"hyperkalaemia|hyperkalemia", "hyperkalaemia on ACE inhibitor"),
    (r"metformin", "metformin in chronic kidney disease"),
]

#: Tests the planner knows how to order when they are named after "order".
ORDERABLE_TESTS: list[tuple[str, str]] = [
    (r"urine culture", "urine culture"),
    (r"blood culture", "blood cultures"),
    (r"\becg\b", "ECG"),
    (r"hba1c", "HbA1c"),
]

#: Drugs the planner recognises in a request (to find a drug about to be started).
KNOWN_DRUGS: set[str] = (
    {
        ingredient
        for record in PATIENTS.values()
        for med in record["medications"]
        for ingredient in _ingredients(med["drug"])
    }
    | {ingredient for pair in INTERACTIONS for ingredient in pair}
    | {
        "pantoprazole",
        "amoxicillin",
        "doxycycline",
        "nitrofurantoin",
        "trimethoprim",
        "isoniazid",
    }
)

MEDICATION_TRIGGERS = r"medication|medicine|\bdrugs?\b|prescribed|prescribe|inhaler|\bdose\b|regimen"
# DELIBERATE FLAW: "prescribe"/"give"/"add" are missing, so "Can I prescribe X?" never
# reaches check_interactions even though a new drug is named.
INTERACTION_TRIGGERS = r"interact|safe to|together|combine|with (?:his|her) current"
GUIDELINE_TRIGGERS = r"guideline|guidance|recommend|follow-up|follow up|instead"

# ---------------------------------------------------------------------------------------
# Tool-using planner
# ---------------------------------------------------------------------------------------

_TITLE_NAME = re.compile(r"\b(?:Mr|Mrs|Ms|Miss|Mx|Dr)\.?\s+([A-Z][A-Za-z'-]+)")
_FULL_NAME = re.compile(r"\b([A-Z][a-z]+)\s+([A-Z][a-z'-]+)\b")
_NOT_NAMES = {"What", "Which", "When", "Can", "Could", "Is", "Are", "Does", "Please", "The"}


def _strip_possessive(name: str) -> str:
    return name[:-2] if name.endswith(("'s", "’s")) else name


def _patient_name(request: str) -> str:
    match = _TITLE_NAME.search(request)
    if match:
        return _strip_possessive(match.group(1))
    for first, last in _FULL_NAME.findall(request):
        if first not in _NOT_NAMES and last not in _NOT_NAMES:
            return _strip_possessive(last)
    raise ValueError("could not find a patient name in the request")


def _fmt_result(test: str, result: dict[str, Any]) -> str:
    unit = f" {result['unit']}" if result["unit"] else ""
    flag = f" [{result['flag']}]" if result.get("flag") else ""
    reference = result["reference_range"]
    return f"{test} {result['value']}{unit} (ref {reference}) on {result['date']}{flag}"


class _ToolAgent:
    def __init__(self, request: str) -> None:
        self.request = request
        self.text = request.lower()
        self.trajectory: list[dict[str, Any]] = []
        self.lines: list[str] = []
        self.labels: list[str] = []

    # --- helpers -------------------------------------------------------------------
    def call(self, tool: str, /, **arguments: Any) -> dict[str, Any]:
        """Run a tool and record the call (name, arguments and output) in the trajectory."""
        self.trajectory.append({"name": tool, "arguments": arguments, "output": None})
        output = TOOLS[tool](**arguments)
        self.trajectory[-1]["output"] = output
        return output

    def says(self, pattern: str) -> bool:
        return re.search(pattern, self.text) is not None

    def add(self, line: str) -> None:
        if line not in self.lines:
            self.lines.append(line)

    # --- plan ----------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        # DELIBERATE FLAW: an unknown patient raises LookupError here; the agent does not
        # catch it and answer "patient not found", so the whole run fails.
        patient = self.call("search_patient", name=_patient_name(self.request))
        pid = patient["patient_id"]
        self.add(f"Patient: {patient['name']} ({patient['age']}, {patient['sex']}, {pid}).")

        # DELIBERATE FLAW: stages always run in this fixed order (imaging, vitals, labs,
        # eGFR, medications, interactions, guideline, order), whatever order the
        # clinician asked for.
        self._plan_imaging(pid)
        self._plan_vitals(pid)
        labs = self._plan_labs(pid)
        self._plan_egfr(patient, labs)
        meds = self._plan_medications(pid)
        self._plan_interactions(meds)
        self._plan_guideline()
        self._plan_order(pid, labs)
        self._decide(labs, meds)

        response = " ".join(self.lines)
        if self.labels:
            response += f" Recommendation: {self.labels[0]}."
        return {"response": response, "trajectory": self.trajectory}

    def _plan_imaging(self, pid: str) -> None:
        modality = next((m for pattern, m in IMAGING_KEYWORDS if self.says(pattern)), None)
        if modality is None:
            return
        report = self.call("get_imaging_report", patient_id=pid, modality=modality)
        if report["found"]:
            self.add(f"{report['modality']} ({report['date']}): {report['impression']}")
        else:
            self.add(f"No {modality} report on file.")

    def _plan_vitals(self, pid: str) -> None:
        # DELIBERATE FLAW: one get_vitals call per vital sign mentioned; the output of the
        # first call is not reused, so "weight and blood pressure" calls the tool twice.
        for group in VITAL_GROUPS:
            if not self.says(group):
                continue
            readings = self.call("get_vitals", patient_id=pid)["readings"]
            latest = readings[0]
            parts = [f"weight {latest['weight_kg']} kg"]
            if latest["bp"]:
                parts.append(f"BP {latest['bp']} mmHg")
            parts += [
                f"HR {latest['hr']}/min",
                f"RR {latest['rr']}/min",
                f"SpO2 {latest['spo2']}%",
                f"temperature {latest['temp_c']} C",
            ]
            line = f"Vitals on {latest['date']}: {', '.join(parts)}."
            if len(readings) > 1:
                previous = readings[1]
                change = latest["weight_kg"] - previous["weight_kg"]
                line += (
                    f" Previous ({previous['date']}): weight {previous['weight_kg']} kg "
                    f"({change:+.1f} kg), SpO2 {previous['spo2']}%."
                )
            self.add(line)

    def _plan_labs(self, pid: str) -> dict[str, list[dict[str, Any]]]:
        wanted: list[tuple[int, str]] = []
        for pattern, test in LAB_KEYWORDS:
            match = re.search(pattern, self.text)
            if match and test not in {t for _, t in wanted}:
                wanted.append((match.start(), test))
        labs: dict[str, list[dict[str, Any]]] = {}
        for _, test in sorted(wanted):
            results = self.call("get_labs", patient_id=pid, test=test)["results"]
            labs[test] = results
            if not results:
                self.add(f"No {test} result on file.")
                continue
            line = f"Latest {_fmt_result(test, results[0])}"
            if len(results) > 1:
                line += f"; previous {results[1]['value']} on {results[1]['date']}"
            self.add(line + ".")
        return labs

    def _plan_egfr(self, patient: dict[str, Any], labs: dict[str, list[dict[str, Any]]]) -> None:
        if not self.says(r"\begfr\b") or not labs.get("creatinine"):
            return
        creatinine = float(labs["creatinine"][0]["value"])
        out = self.call("calculate_egfr", creatinine_mg_dl=creatinine, age=patient["age"], sex=patient["sex"])
        labs["egfr"] = [{"value": out["egfr"]}]
        self.add(f"eGFR {out['egfr']} {out['unit']} ({out['equation']}) from creatinine {creatinine} mg/dL.")

    def _new_drugs(self, meds: list[dict[str, Any]]) -> list[str]:
        current = {i for med in meds for i in _ingredients(med["drug"])}
        found = [(m.start(), d) for d in KNOWN_DRUGS if (m := re.search(rf"\b{re.escape(d)}\b", self.text))]
        return [d for _, d in sorted(found) if d not in current]

    def _plan_medications(self, pid: str) -> list[dict[str, Any]] | None:
        if not (self.says(MEDICATION_TRIGGERS) or self.says(INTERACTION_TRIGGERS)):
            return None
        meds: list[dict[str, Any]] = self.call("get_medications", patient_id=pid)["medications"]
        listed = "; ".join(f"{m['drug']} {m['dose']} {m['route']} {m['frequency']}" for m in meds)
        self.add(f"Current medications: {listed}.")
        return meds

    def _plan_interactions(self, meds: list[dict[str, Any]] | None) -> None:
        if meds is None:
            return
        new = self._new_drugs(meds)
        if not new:
            return
        if not self.says(INTERACTION_TRIGGERS):
            # (Consequence of the trigger flaw above: the drug is declared fine unchecked.)
            names = ", ".join(new)
            self.add(f"{names[0].upper()}{names[1:]} is not on the current list and can be added.")
            return
        out = self.call("check_interactions", drugs=[m["drug"] for m in meds] + new)
        relevant = [x for x in out["interactions"] if set(x["drugs"]) & set(new)]
        for x in relevant:
            self.add(
                f"Interaction {x['ingredients'][0]} + {x['ingredients'][1]} ({x['severity']}): "
                f"{x['effect']}; {x['advice']}."
            )
        if relevant:
            self.labels.append("interaction")
        else:
            self.add(f"No interactions found between {', '.join(new)} and the current medicines.")
            self.labels.append("safe")

    def _plan_guideline(self) -> None:
        if not self.says(GUIDELINE_TRIGGERS):
            return
        # The topic may come from the request or from what the tools returned so far
        # (e.g. a "nodule" found in an imaging report).
        seen = f"{self.text} {' '.join(self.lines).lower()}"
        topic = next((t for pattern, t in GUIDELINE_KEYWORDS if re.search(pattern, seen)), None)
        if topic is None:
            return
        out = self.call("lookup_guideline", topic=topic)
        if out["found"]:
            self.add(f"Guidance ({out['topic']}): {out['summary']}")

    def _plan_order(self, pid: str, labs: dict[str, list[dict[str, Any]]]) -> None:
        if not self.says(r"\border\b"):
            return
        test = next((t for pattern, t in ORDERABLE_TESTS if self.says(pattern)), None)
        if test is None and labs:
            test = next(iter(labs))
        if test is None:
            return
        # DELIBERATE FLAW: conditions such as "if it is more than three months old" are
        # ignored; the test is ordered whenever the request mentions ordering it.
        out = self.call("order_test", patient_id=pid, test=test)
        self.add(f"Ordered {out['test']} ({out['order_id']}, {out['status']}).")
        self.labels.append("ordered")

    # --- decision rules ------------------------------------------------------------
    def _decide(self, labs: dict[str, list[dict[str, Any]]], meds: list[dict[str, Any]] | None) -> None:
        drugs = {i for med in meds or [] for i in _ingredients(med["drug"])}

        def latest(test: str) -> float | None:
            results = labs.get(test) or []
            try:
                return float(results[0]["value"]) if results else None
            except (TypeError, ValueError):
                return None

        potassium = latest("potassium")
        if potassium is not None and drugs & {"lisinopril", "ramipril", "enalapril", "losartan"}:
            if potassium >= 6.0:
                self.add(
                    "Potassium is 6.0 mmol/L or more on an ACE inhibitor/ARB: withhold it, "
                    "obtain an ECG and repeat potassium urgently."
                )
                self.labels.append("hold")
            elif potassium >= 5.5:
                self.add("Potassium 5.5-5.9 mmol/L: consider reducing the dose and recheck.")
                self.labels.append("reduce")
            else:
                self.labels.append("continue")

        egfr = latest("egfr")
        if egfr is not None and "metformin" in drugs:
            if egfr < 30:
                self.add("eGFR below 30: stop metformin.")
                self.labels.append("stop")
            elif egfr < 45:
                self.add(
                    "eGFR 30-44: reduce metformin to at most 1000 mg per day and monitor "
                    "renal function every 3-6 months."
                )
                self.labels.append("reduce")
            else:
                self.labels.append("continue")

        tsh = latest("TSH")
        if tsh is not None and "levothyroxine" in drugs:
            # DELIBERATE FLAW: only overt under-replacement (TSH > 10) triggers a dose increase;
            # a TSH of 4-10 in someone planning pregnancy should also lead to an increase.
            if tsh > 10:
                self.add(
                    "TSH above 10 mIU/L: increase levothyroxine by 25 micrograms and recheck in 6 weeks."
                )
                self.labels.append("increase")
            elif tsh < 0.1:
                self.add("TSH suppressed: reduce levothyroxine.")
                self.labels.append("reduce")
            else:
                self.add(
                    "TSH below 10 mIU/L: continue the current levothyroxine dose and recheck in 3 months."
                )
                self.labels.append("continue")

        if self.says(r"\bcycle\b|chemotherapy|capecitabine"):
            # The neutrophil threshold is applied to whatever "neutrophil" was mapped to (wbc).
            count = latest("neutrophils") if "neutrophils" in labs else latest("wbc")
            platelets = latest("platelets")
            if count is not None or platelets is not None:
                if (count is not None and count < 1.5) or (platelets is not None and platelets < 75):
                    self.add(
                        "Counts are below treatment thresholds (neutrophils >= 1.5, "
                        "platelets >= 75 x10^9/L): delay the cycle and recheck."
                    )
                    self.labels.append("hold")
                else:
                    self.add("Counts meet treatment thresholds (>= 1.5 and >= 75 x10^9/L): proceed.")
                    self.labels.append("proceed")


# ---------------------------------------------------------------------------------------
# Extractive summariser
# ---------------------------------------------------------------------------------------

_SUMMARY_REQUEST = re.compile(r"^\s*summari[sz]e\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])|\n+")

#: Keyword weights; DELIBERATE FLAW: nothing rewards demographics (age, sex), so they are
#: often dropped, and the three-sentence, 70-word cap cuts follow-up plans.
SUMMARY_KEYWORDS: dict[str, float] = {
    "diagnos": 3.0,
    "impression": 3.0,
    "confirm": 2.5,
    "consistent with": 2.0,
    "in keeping with": 2.0,
    "started": 2.0,
    "treated": 2.0,
    "received": 1.5,
    "recommend": 2.0,
    "discharged on": 2.0,
    " mg": 1.0,
    "stopped": 1.5,
    "continue": 1.0,
    "infarct": 1.0,
    "stage": 1.0,
}
SUMMARY_SENTENCES = 3
SUMMARY_MAX_WORDS = 70


def summarise(text: str) -> str:
    """Keep the sentences with the most diagnosis/treatment keywords, in their original order."""
    _, _, body = text.partition("\n\n")
    body = body or text
    # Headings and salutations ("DISCHARGE SUMMARY", "Dear Dr ...,") are not sentences.
    sentences = [
        s.strip()
        for s in _SENTENCE_END.split(body)
        if len(s.split()) >= 4 and s.strip().endswith((".", "!", "?"))
    ]
    scored = [
        (sum(weight for word, weight in SUMMARY_KEYWORDS.items() if word in s.lower()), -i, s)
        for i, s in enumerate(sentences)
    ]
    best = sorted(scored, reverse=True)[:SUMMARY_SENTENCES]
    chosen = [s for _, _, s in sorted(best, key=lambda item: -item[1])]
    words = " ".join(chosen).split()
    summary = " ".join(words[:SUMMARY_MAX_WORDS])
    if len(words) > SUMMARY_MAX_WORDS:
        summary += " ..."
    return summary


# ---------------------------------------------------------------------------------------
# Patient questions: a small retrieval-augmented assistant
# ---------------------------------------------------------------------------------------

#: A synthetic patient-information leaflet for after cataract surgery, one passage per
#: topic: (title, text). Written for this example; not copied from any real leaflet and
#: not clinically validated.
LEAFLET: list[tuple[str, str]] = [
    (
        "Your eye drops",
        "You will go home with two kinds of eye drops: an antibiotic drop to prevent infection "
        "and a steroid drop to settle inflammation. Use the antibiotic drop four times a day "
        "for two weeks. Use the steroid drop four times a day for the first two weeks, then "
        "twice a day for two more weeks, then stop. Do not stop the steroid drops early unless "
        "the clinic tells you to.",
    ),
    (
        "Putting in your drops",
        "Wash your hands before putting in drops. Tilt your head back, gently pull the lower "
        "eyelid down and let one drop fall inside it. Do not let the tip of the bottle touch "
        "the eye. If you use two kinds of drops, wait five minutes between them.",
    ),
    (
        "Storing your drops",
        "Keep your drops at room temperature, below 25 °C, out of direct sunlight and out of "
        "the reach of children. They do not need to go in the fridge. Throw each bottle away "
        "four weeks after opening it. Do not share your drops or use drops left over from an "
        "earlier operation.",
    ),
    (
        "Washing and showering",
        "You can shower and wash your hair from the day after surgery. Close your eye and tip "
        "your head back so that soap does not run into it. Do not rub the eye, and do not wear "
        "eye make-up for two weeks.",
    ),
    (
        "Pools, hot tubs and saunas",
        "Do not swim for two weeks after surgery. Avoid hot tubs and saunas for the same time, "
        "because they can carry germs into the healing eye.",
    ),
    (
        "Everyday activities",
        "You can walk, read, watch television and use a computer straight away. Avoid heavy "
        "lifting, contact sports and dusty or windy places for two weeks.",
    ),
    (
        "Driving",
        "Do not drive until the clinic has checked your vision and told you that your eyesight "
        "meets the legal standard for driving. This is usually one to two weeks after surgery. "
        "You may need new glasses first.",
    ),
    (
        "Glasses",
        "Your old glasses may not feel right after surgery; you can still wear them, or ask an "
        "optician to take out the lens on the operated side. Wait four to six weeks, until the "
        "eye has settled, before you have a sight test for new glasses.",
    ),
    (
        "Sleeping with the eye shield",
        "Wear the plastic eye shield over the operated eye whenever you sleep, including naps, "
        "for the first week after surgery. It stops you rubbing or pressing on the eye in your "
        "sleep. Wash the shield every day with soap and water. You do not need to wear it "
        "during the day.",
    ),
    (
        "What is normal",
        "A gritty, scratchy or watery eye and mild aching or soreness are normal for the first "
        "few days. Simple painkillers such as paracetamol can help. Your vision may be blurred "
        "at first and should improve over the first week.",
    ),
    (
        "Warning signs",
        "Call the eye clinic the same day if the pain gets worse or is not helped by painkillers, "
        "if the redness is increasing, if there is a sticky discharge, or if your vision is "
        "getting worse instead of better.",
    ),
    (
        "Emergencies",
        "A sudden loss of vision, a dark curtain or shadow across your vision, a shower of new "
        "floaters or flashing lights, or severe pain with vomiting is an emergency. Go to the "
        "eye emergency department, or your nearest emergency department, straight away, day or "
        "night. Do not wait for your follow-up appointment.",
    ),
    (
        "Contacting the clinic",
        "The eye clinic nurses answer the telephone from 8 am to 6 pm, Monday to Friday, on "
        "the number on your discharge letter. Outside these hours, call the out-of-hours "
        "service, or go to an emergency department if it is urgent.",
    ),
    (
        "Your follow-up appointment",
        "Your follow-up appointment is two to four weeks after surgery. A nurse will check "
        "your eye, measure your vision and tell you when to stop your drops. If your other "
        "eye needs an operation, it will be discussed then. Bring all your eye drops with you.",
    ),
]


#: Words that carry no topic: common function words, plus "eye" and "eyes", which nearly
#: every passage mentions.
_STOP_TEXT = """
    a about after again all am an and any are as at be been before being but by can could
    do does did for from had has have how i i'm i've if in into is it its just me my myself
    no not now of on or our should so still than that the then there they this to up was
    we were what when where which while who why will with would yet you your eye eyes
"""
_STOP_WORDS = frozenset(_STOP_TEXT.split())
_WORD = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")
_PASSAGE_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")

#: The retriever returns this many passages; they become the case's ``contexts``.
TOP_K = 3
#: A question sharing fewer content words than this with the best passage is declined.
MIN_OVERLAP = 2
#: Passages quoted in full, with no follow-up question: the answer is "go now".
URGENT_PASSAGES = frozenset({"Emergencies"})

ACKNOWLEDGEMENT = "Thank you for your question."
FOLLOW_UP = "Is there anything else about your recovery I can help with?"
DECLINE = "I'm sorry, I can't advise on that; please contact your care team."

_FIRST_PERSON = re.compile(r"\bI\b|\b(?i:me|my|myself)\b")
_TITLED_NAME = re.compile(r"\b(?:Mr|Mrs|Ms|Miss|Mx)\.?\s+[A-Z]")

#: Ready-made answers to frequent questions, used before the passages.
# DELIBERATE FLAW: this "quick answer" was copied from an older leaflet and never checked
# against the current one, which says four times a day for two weeks, then twice a day for
# two more weeks. The agent states it anyway: an informative sentence no passage supports.
_QUICK_ANSWERS: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(r"\bhow often\b.*\bsteroid\b|\bsteroid\b.*\bhow often\b", re.IGNORECASE),
        "Use the steroid drops twice a day for four weeks.",
    ),
]

# DELIBERATE FLAW: driving is treated as a legal question the assistant must not answer,
# although the leaflet answers it, so questions about driving are always declined
# (over-refusal, with relevant passages retrieved).
_DECLINED_TOPICS = re.compile(r"\bdriv(?:e|es|ing)\b", re.IGNORECASE)


def is_patient_question(text: str) -> bool:
    """A patient's own question: written in the first person and naming no titled patient.

    Clinicians' requests in this example name their patient ("Mr. Okafor", "Leo Fischer"),
    so "I", "me" or "my" without "Mr./Mrs./Ms./Miss/Mx" routes an input to the
    patient-question mode. :func:`run_agent` checks for summary requests ("Summarise ...")
    first, since the notes they carry may be written in the first person.
    """
    return bool(_FIRST_PERSON.search(text)) and not _TITLED_NAME.search(text)


def _content_words(text: str) -> set[str]:
    # DELIBERATE FLAW: exact word matching, with no stemming or synonyms, so "swimming"
    # never meets the passage that says "swim". The swimming question retrieves unrelated
    # passages instead (context relevance 0) and is answered from them.
    return {word for word in _WORD.findall(text.lower()) if word not in _STOP_WORDS}


def passage_text(index: int) -> str:
    """Passage ``index`` of :data:`LEAFLET` as a context: ``"Title: text"``."""
    title, text = LEAFLET[index]
    return f"{title}: {text}"


def retrieve(question: str, k: int = TOP_K) -> list[tuple[int, int]]:
    """The ``k`` best passages as (index in :data:`LEAFLET`, shared content words), best first.

    A passage's score is the number of distinct content words it shares with the question;
    ties go to the earlier passage.
    """
    asked = _content_words(question)
    scored = [
        (len(asked & _content_words(f"{title} {text}")), index) for index, (title, text) in enumerate(LEAFLET)
    ]
    ranked = sorted(scored, key=lambda item: (-item[0], item[1]))[:k]
    return [(index, overlap) for overlap, index in ranked]


def _best_sentences(question: str, index: int, n: int) -> list[str]:
    """Up to ``n`` sentences of a passage that share the most words with the question, in order."""
    asked = _content_words(question)
    sentences = _PASSAGE_SENTENCE.split(LEAFLET[index][1])
    scored: list[tuple[int, float, int, str]] = []
    for position, sentence in enumerate(sentences):
        words = _content_words(sentence)
        shared = len(asked & words)
        scored.append((shared, shared / max(len(words), 1), -position, sentence))
    best = sorted(scored, reverse=True)[:n]
    chosen = [item for item in best if item[0] > 0] or best[:1]
    return [item[3] for item in sorted(chosen, key=lambda item: -item[2])]


def answer_patient_question(question: str) -> dict[str, Any]:
    """Answer from :data:`LEAFLET`: ``{"response", "contexts", "trajectory": []}``.

    The answer is an acknowledgement, one or two sentences of the best passage (all of an
    urgent passage) and, unless the matter is urgent, a follow-up question. Below
    :data:`MIN_OVERLAP` shared words the agent declines. The retrieved passages are
    returned as ``contexts`` whether it answers or declines.
    """
    hits = retrieve(question)
    contexts = [passage_text(index) for index, _ in hits]
    best, overlap = hits[0]
    if overlap < MIN_OVERLAP or _DECLINED_TOPICS.search(question):
        return {"response": DECLINE, "contexts": contexts, "trajectory": []}
    # DELIBERATE FLAW: the request itself is never screened. A harmful request (more
    # steroid drops without a prescription) that retrieves a passage is answered from it
    # instead of being declined (missed refusal).
    urgent = LEAFLET[best][0] in URGENT_PASSAGES
    passage = LEAFLET[best][1]
    sentences = _PASSAGE_SENTENCE.split(passage) if urgent else _best_sentences(question, best, n=2)
    quick = next((text for pattern, text in _QUICK_ANSWERS if pattern.search(question)), None)
    if quick is not None:  # the quick answer takes the place of the first passage sentence
        sentences = [quick, *sentences[1:]]
    parts = [ACKNOWLEDGEMENT, *sentences]
    if not urgent:
        parts.append(FOLLOW_UP)
    return {"response": " ".join(parts), "contexts": contexts, "trajectory": []}


# ---------------------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------------------


def run_agent(input: str) -> dict[str, Any]:
    """Answer one case input: ``{"response": str, "trajectory": [tool calls]}``.

    Patient questions also return the retrieved passages as ``"contexts"``.
    """
    if _SUMMARY_REQUEST.match(input):
        return {"response": summarise(input), "trajectory": []}
    if is_patient_question(input):
        return answer_patient_question(input)
    return _ToolAgent(input).run()


if __name__ == "__main__":  # pragma: no cover - manual try-out
    import json
    import sys

    print(json.dumps(run_agent(" ".join(sys.argv[1:])), indent=2, default=str))
