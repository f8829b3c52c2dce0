"""One verdict of ``check_facts`` as the tests compare it."""

from __future__ import annotations

from clineval.judges.offline import OfflinePrimitives


def label_and_reason(primitives: OfflinePrimitives, claim: str, evidence: str) -> tuple[str, str | None]:
    """The label and reason of the verdict on one claim against one evidence text."""
    (verdict,) = primitives.check_facts_sync([claim], evidence)
    return verdict.label, verdict.reason
