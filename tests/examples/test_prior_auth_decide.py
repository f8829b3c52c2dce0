"""Checks on the prior-authorization example: its synthetic data and the deterministic decide()."""

from __future__ import annotations

import importlib.util
import re
import sys
from datetime import date
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from clineval.suites import load_suite

PRIOR_AUTH = Path(__file__).resolve().parents[2] / "examples" / "prior_auth"
POLICIES = PRIOR_AUTH / "data" / "policies"
NOTES = PRIOR_AUTH / "data" / "notes"


def _expected_from_suite() -> dict[str, dict[str, Any]]:
    """The expectations written in the example's suite (the one place they are kept)."""
    suite = load_suite(PRIOR_AUTH / "suite.yaml")
    expected: dict[str, dict[str, Any]] = {}
    for case in suite.cases:
        truths = {item.query: item.ground_truth for item in case.evaluations}
        expected[case.id] = {
            "policy": case.id.split("-")[0],
            "diagnosis": case.metadata["diagnosis"],
            "medication": case.metadata["medication"],
            "expected_decision": truths.pop("decision"),
            "unmet_criteria": truths.pop("criteria"),
            "reference_rationale": truths.pop("rationale"),
            "fields": truths,
        }
    return expected


EXPECTED = _expected_from_suite()
CASES = sorted(EXPECTED)
HEADERS = ("Patient", "Date of birth", "Sex", "MRN", "Visit date", "Prescriber", "Specialty")
SECTIONS = ("History of present illness", "Medication history", "Relevant findings", "Assessment and plan")


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("clineval_prior_auth_decide", PRIOR_AUTH / "decide.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


pa = _load()


def _policy(case: str) -> str:
    return (POLICIES / f"{EXPECTED[case]['policy']}.md").read_text("utf-8")


def _note(case: str) -> str:
    return (NOTES / f"{case}.md").read_text("utf-8")


def _get(output: dict[str, Any], path: str) -> Any:
    for key in path.split("."):
        output = output[key]
    return output


def _unmet(output: dict[str, Any]) -> list[str]:
    return sorted(c["criterion"] for c in output["criteria"] if c["assessment"] == "not met")


def _criterion(output: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(c for c in output["criteria"] if c["criterion"] == kind)


# --- the data --------------------------------------------------------------------------------


def test_every_note_has_an_expected_entry_and_each_pair_splits() -> None:
    assert sorted(p.stem for p in NOTES.glob("*.md")) == CASES
    assert sorted(p.stem for p in POLICIES.glob("*.md")) == ["001", "002", "003", "004", "005"]
    for pair in ("001", "002", "003", "004", "005"):
        assert EXPECTED[f"{pair}-a"]["expected_decision"] == "approved"
        assert EXPECTED[f"{pair}-b"]["expected_decision"] == "denied"
        assert EXPECTED[f"{pair}-a"]["unmet_criteria"] == []
        assert EXPECTED[f"{pair}-b"]["unmet_criteria"]


@pytest.mark.parametrize("case", CASES)
def test_notes_are_synthetic_well_formed_and_do_not_reveal_the_answer(case: str) -> None:
    text = _note(case)
    assert 25 <= len(text.splitlines()) <= 60
    for label in HEADERS:
        assert re.search(rf"^{label}: \S", text, re.M), label
    for title in SECTIONS:
        assert re.search(rf"^{title}$", text, re.M), title
    assert re.search(r"^MRN: SYN-\d+$", text, re.M)
    assert re.search(r"^Diagnosis: .+ \([A-Z]\d{2}\.\d+\)$", text, re.M)
    assert re.search(r"^Requested: ", text, re.M)
    assert not re.search(r"approv|denied|denial|expected", text, re.I)


@pytest.mark.parametrize("policy", sorted(POLICIES.glob("*.md")), ids=lambda p: p.stem)
def test_policies_follow_the_grammar(policy: Path) -> None:
    text = policy.read_text("utf-8")
    assert 15 <= len(text.splitlines()) <= 40
    assert re.match(rf"# SYN-PA-{policy.stem}: \S+.* for \S+", text)
    assert "A request missing any criterion above is denied." in text
    assert text.rstrip().endswith(
        "Synthetic policy written for the clineval examples; not a real payer policy."
    )
    assert len(pa.parse_policy(text)[2]) >= 4


# --- decide() on every case ------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_decide_gives_the_expected_decision_fields_and_unmet_criteria(case: str) -> None:
    expected = EXPECTED[case]
    output = pa.decide(_policy(case), _note(case))
    assert output["decision"] == expected["expected_decision"]
    for path, value in expected["fields"].items():
        assert _get(output, path) == value, path
    assert output["clinical_information"]["diagnosis"] == expected["diagnosis"]
    assert output["clinical_information"]["treatment_request"]["medication"] == expected["medication"]
    assert _unmet(output) == sorted(expected["unmet_criteria"])


@pytest.mark.parametrize("case", CASES)
def test_output_structure_and_rationale(case: str) -> None:
    output = pa.decide(_policy(case), _note(case))
    assert list(output) == [
        "patient_information",
        "physician_information",
        "clinical_information",
        "policy",
        "criteria",
        "decision",
        "rationale",
    ]
    patient = output["patient_information"]
    assert set(patient) == {"patient_name", "date_of_birth", "age", "sex", "mrn"}
    assert isinstance(patient["age"], int) and patient["mrn"].startswith("SYN-")
    assert set(output["physician_information"]) == {"physician_name", "specialty"}
    clinical = output["clinical_information"]
    assert set(clinical) == {"diagnosis", "icd10_code", "treatment_request", "prior_treatments", "findings"}
    assert clinical["prior_treatments"] and clinical["findings"]
    assert output["policy"]["policy_id"] == f"SYN-PA-{EXPECTED[case]['policy']}"
    for criterion in output["criteria"]:
        assert set(criterion) == {"criterion", "requirement", "assessment", "evidence"}
        assert criterion["assessment"] in ("met", "not met") and criterion["evidence"]
    rationale = output["rationale"]
    verb = "Approved" if output["decision"] == "approved" else "Denied"
    assert rationale.startswith(f"{verb} under {output['policy']['policy_id']}: ")
    assert 1 <= len(re.findall(r"\.(?:\s|$)", rationale)) <= 3
    reference = EXPECTED[case]["reference_rationale"]
    assert 1 <= len(re.findall(r"\.(?:\s|$)", reference)) <= 3


def test_decide_hard_codes_no_case() -> None:
    source = (PRIOR_AUTH / "decide.py").read_text("utf-8")
    for case, expected in EXPECTED.items():
        assert case not in source
        assert expected["fields"]["patient_information.patient_name"] not in source
    assert "SYN-" not in source


# --- parser pieces ---------------------------------------------------------------------------


def test_negated_findings_do_not_count() -> None:
    assert pa.documented("minimal residual disease positive", ["MRD negative (< 0.01%)"]) is None
    assert (
        pa.documented("minimal residual disease positive", ["MRD 0.2% (positive)"]) == "MRD 0.2% (positive)"
    )
    assert pa.documented("Philadelphia chromosome positive", ["Ph-negative disease"]) is None
    assert pa.documented("Philadelphia chromosome positive", ["Ph+ B-ALL"]) == "Ph+ B-ALL"
    assert pa.documented("tuberculosis screening negative", ["TB screening 2026-01-02: negative"])
    assert pa.documented("tuberculosis screening negative", ["No history of tuberculosis"]) is None
    # a cue after the concept that only negates what follows it does not negate the concept
    assert pa.documented("Crohn's disease", ["Crohn's disease of small intestine without complications"])


def test_combination_needs_the_partner_drug_in_the_plan_not_negated() -> None:
    note = _note("005-a")
    plan = note.index("Assessment and plan")
    without = note[:plan] + "Assessment and plan\nRequested: everolimus 5 mg daily\nNo sorafenib.\n"
    output = pa.decide(_policy("005-a"), without)
    assert output["decision"] == "denied" and _unmet(output) == ["Combination"]
    assert "sorafenib" in output["rationale"]


@pytest.mark.parametrize(
    ("entry", "status"),
    [
        ("clobazam 5 mg at bedtime: planned, not started", "not given"),
        ("valproic acid: declined by parents (worried about liver problems)", "not given"),
        ("tacrolimus 0.1% ointment: prescribed 2025-12, not started (cost)", "not given"),
        (
            "rufinamide 200 mg twice daily, 2023-09 to 2024-01: vomiting, stopped (not tolerated)",
            "not tolerated",
        ),
        (
            "prednisone 40 mg daily, 2025-11 to 2026-01: no remission, stopped after taper",
            "inadequate response",
        ),
        (
            "hydrocortisone 1% cream to the face, since 2024-03: ongoing, face settled",
            "adequate or unclear response",
        ),
    ],
)
def test_medication_status(entry: str, status: str) -> None:
    assert pa.medication_status(entry) == status


def test_a_planned_drug_is_not_a_prior_therapy() -> None:
    note = _note("004-a").replace(
        "tacrolimus 0.1% ointment twice daily to face and flexures, 2025-04 to 2025-06: intense burning, "
        "stopped (not tolerated)",
        "tacrolimus 0.1% ointment twice daily: planned, not started",
    )
    output = pa.decide(_policy("004-a"), note)
    assert _unmet(output) == ["Prior therapy"]
    assert "tacrolimus was documented but not given" in output["rationale"]


def test_a_current_excluded_drug_fails_not_with() -> None:
    note = _note("004-a").replace(
        "- cetirizine 10 mg at night", "- upadacitinib 15 mg daily, 2025-12 to present: ongoing\n- cetirizine"
    )
    output = pa.decide(_policy("004-a"), note)
    assert _unmet(output) == ["Not with"]
    assert "upadacitinib" in _criterion(output, "Not with")["evidence"]
    stopped = note.replace("Start dupilumab.", "Stop upadacitinib; start dupilumab two weeks later.")
    assert pa.decide(_policy("004-a"), stopped)["decision"] == "approved"


@pytest.mark.parametrize(
    ("required", "specialty", "ok"),
    [
        ("gastroenterologist", "Pediatric gastroenterology", True),
        ("gastroenterologist", "pediatric gastroenterologist", True),
        ("gastroenterologist", "General pediatrics", False),
        ("oncologist", "Pediatric hematology/oncology", True),
        ("neurologist", "Family medicine", False),
        ("dermatologist", "Dermatology", True),
    ],
)
def test_qualified_specialties_satisfy_the_prescriber_criterion(
    required: str, specialty: str, ok: bool
) -> None:
    assert pa.specialty_satisfies(required, specialty) is ok


def test_a_consulting_specialist_satisfies_the_prescriber_criterion_but_a_referral_does_not() -> None:
    assert _criterion(pa.decide(_policy("002-b"), _note("002-b")), "Prescriber")["assessment"] == "not met"
    note = _note("002-b").replace(
        "Review in 4 weeks.", "Plan made in consultation with a pediatric neurologist."
    )
    prescriber = _criterion(pa.decide(_policy("002-b"), note), "Prescriber")
    assert prescriber["assessment"] == "met"


@pytest.mark.parametrize(
    ("born", "visit", "age"),
    [
        ("1996-02-29", "2026-02-28", 29),
        ("1996-02-29", "2026-03-01", 30),
        ("2014-08-19", "2026-04-14", 11),
        ("2014-04-14", "2026-04-14", 12),
    ],
)
def test_age_is_computed_at_the_visit_date(born: str, visit: str, age: int) -> None:
    assert pa.age_at(date.fromisoformat(born), date.fromisoformat(visit)) == age


def test_age_in_the_output_is_at_the_visit_date() -> None:
    assert pa.decide(_policy("004-a"), _note("004-a"))["patient_information"]["age"] == 29


def test_a_condition_that_is_not_documented_makes_its_criterion_not_applicable() -> None:
    prior = _criterion(pa.decide(_policy("003-a"), _note("003-a")), "Prior therapy")
    assert prior["assessment"] == "met" and prior["evidence"].startswith("Not applicable")
    output = pa.decide(_policy("003-b"), _note("003-b"))
    prior = _criterion(output, "Prior therapy")
    assert prior["assessment"] == "not met" and "dasatinib" in prior["evidence"]
    assert "Philadelphia chromosome positive is documented" in output["rationale"]


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize("label", ["MRN", "Date of birth", "Specialty"])
def test_a_missing_header_raises(label: str) -> None:
    note = re.sub(rf"^{label}:.*\n", "", _note("001-a"), flags=re.M)
    with pytest.raises(ValueError, match=f"missing the required header '{label}:'"):
        pa.decide(_policy("001-a"), note)


def test_a_missing_policy_title_or_unknown_kind_raises() -> None:
    policy = _policy("001-a")
    with pytest.raises(ValueError, match="no title line"):
        pa.decide(policy.replace("# SYN-PA-001: ", "SYN-PA-001 "), _note("001-a"))
    with pytest.raises(ValueError, match="unknown criterion kind"):
        pa.decide(policy.replace("**Age**", "**Weight**"), _note("001-a"))


def test_missing_diagnosis_or_request_lines_raise() -> None:
    with pytest.raises(ValueError, match="Diagnosis"):
        pa.decide(_policy("001-a"), re.sub(r"\(K50\.80\)", "", _note("001-a")))
    with pytest.raises(ValueError, match="Requested"):
        pa.decide(_policy("001-a"), _note("001-a").replace("Requested:", "Request"))
