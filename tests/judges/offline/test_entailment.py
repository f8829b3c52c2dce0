"""check_facts on the hand-written development set, and its structural guarantees."""

from __future__ import annotations

import pytest
from tests.judges.offline.devset import CXR, DEV_SET, HPI

from clineval.judges.offline import OfflinePrimitives


@pytest.mark.parametrize(("evidence", "claim", "label", "reason"), DEV_SET, ids=[c[1][:40] for c in DEV_SET])
def test_dev_set(
    primitives: OfflinePrimitives, evidence: str, claim: str, label: str, reason: str | None
) -> None:
    (verdict,) = primitives.check_facts_sync([claim], evidence)
    assert (verdict.label, verdict.reason) == (label, reason), verdict.explanation
    assert verdict.explanation


def test_conflict_quotes_the_conflicting_span(primitives: OfflinePrimitives) -> None:
    (verdict,) = primitives.check_facts_sync(["No evidence of pneumothorax."], CXR)
    assert verdict.evidence == "Chest X-ray: small left apical pneumothorax."
    assert "negation" in verdict.explanation


def test_unrelated_claim_quotes_nothing(primitives: OfflinePrimitives) -> None:
    (verdict,) = primitives.check_facts_sync(["The patient enjoys gardening on weekends."], CXR)
    assert (verdict.label, verdict.reason, verdict.evidence) == ("not_entailed", "missing", "")


def test_one_verdict_per_fact_in_order(primitives: OfflinePrimitives) -> None:
    claims = ["She denies chest pain.", "She reports chest pain.", "She denies chest pain."]
    verdicts = primitives.check_facts_sync(claims, HPI)
    assert [v.label for v in verdicts] == ["entailed", "not_entailed", "entailed"]
    assert primitives.check_facts_sync([], HPI) == []


def test_empty_evidence(primitives: OfflinePrimitives) -> None:
    verdicts = primitives.check_facts_sync(["She has COPD.", "BP 150/92."], "  ")
    assert [(v.label, v.reason, v.evidence) for v in verdicts] == [("not_entailed", "missing", "")] * 2


def test_deterministic(primitives: OfflinePrimitives) -> None:
    claims = [c for e, c, _, _ in DEV_SET if e == HPI]
    assert primitives.check_facts_sync(claims, HPI) == primitives.check_facts_sync(claims, HPI)
