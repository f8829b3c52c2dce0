"""Biomarker results and stages in the offline judge's check: stated in other words they
are matched, with the opposite status or another value they are a conflict."""

from __future__ import annotations

import pytest

from clineval.judges.offline import OfflinePrimitives


@pytest.fixture(scope="module")
def primitives() -> OfflinePrimitives:
    return OfflinePrimitives()


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Sequencing found no BRAF mutation.", "Next-generation sequencing: BRAF V600E mutation detected."),
        ("PD-L1 expression was negative.", "PD-L1 tumor proportion score 80% (positive)."),
        ("The glioma is IDH wild-type.", "IDH1 R132H mutation identified in the glioma."),
        ("MGMT promoter is unmethylated.", "MGMT promoter methylated."),
        ("Pathology: pT3 N1 M0 rectal adenocarcinoma.", "Pathology: pT2 N1 M0 rectal adenocarcinoma."),
        ("Child-Pugh class B cirrhosis.", "Child-Pugh class C cirrhosis."),
    ],
)
def test_an_opposite_status_or_another_stage_is_a_conflict(
    primitives: OfflinePrimitives, claim: str, evidence: str
) -> None:
    [verdict] = primitives.check_facts_sync([claim], evidence)
    assert (verdict.label, verdict.reason) == ("not_entailed", "incorrect"), verdict.explanation
    assert (
        verdict.explanation.startswith("conflict check (biomarker status") or "stage:" in verdict.explanation
    )


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("KRAS is wild-type.", "No KRAS mutation was detected."),
        ("The tumor is HER2 negative.", "Tumor HER2 immunohistochemistry: 1+ (negative)."),
        ("Colon cancer, stage 4.", "Stage IV colon cancer."),
        ("Heart failure, NYHA class 2.", "NYHA class II heart failure."),
    ],
)
def test_the_same_result_in_other_words_is_entailed(
    primitives: OfflinePrimitives, claim: str, evidence: str
) -> None:
    [verdict] = primitives.check_facts_sync([claim], evidence)
    assert verdict.label == "entailed", verdict.explanation
