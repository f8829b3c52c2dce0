"""An optional LLM record generator: a model writes the record for an (anatomy, modality,
disease), through the project's judge backends and a prompt written for clineval.

The judge answers with the published record fields as a JSON object validated against
:class:`~clineval.environments.radbench.model.Record`'s schema (the judge's own
validation and re-ask apply). A record whose anatomy or modality differs from the
requested ones is refused. The offline generator (:mod:`.records`) needs no model; this
one is for users who want more variety, e.g.::

    judge = build_judge(JudgeConfig.model_validate("openai:gpt-4o-mini"))
    record = await generate_record_llm(judge, "Chest", "CT", "Pulmonary embolism", record_id="llm-1")
"""

from __future__ import annotations

from pydantic import ConfigDict

from clineval.environments.radbench.model import Record
from clineval.environments.radbench.vocab import PAIRS
from clineval.judges.base import Judge

PROMPT_VERSION = "radbench.record/1"

SYSTEM = (
    "You are a radiologist writing synthetic but clinically realistic patient records for testing "
    "software agents. Invent a patient; never describe a real person. Every field must agree with "
    "the others: the finding must be visible on the stated modality for the stated region, the "
    "measurements must be plausible with units, the indicator must be a real score, grade or stage "
    "that applies to the disease, the report must read like a radiology report (findings, then "
    "impression) and the treatment like a short guideline-based plan."
)

INSTRUCTIONS = """Write one record for:
- Anatomy: {anatomy}
- Modality: {modality}
- Disease: {disease}

Answer with a JSON object with exactly these keys:
Information {{Age (number as text), Sex (Female or Male), Height (cm, number as text),
Weight (kg, number as text), History (one sentence), Complaint (one sentence, symptoms only)}},
Anatomy, Modality, Anomaly {{Part (where), Symptom (what is abnormal)}}, Disease,
OrganBiomarker {{OrganObject, OrganDim (e.g. size, volume, thickness, density),
OrganQuant (value with unit)}}, AnomalyBiomarker {{AnomalyObject (the same abnormality as
Anomaly.Symptom), AnomalyDim, AnomalyQuant (value with unit)}},
Indicator {{Name, Value}}, Report {{Finding, Impression}}, Treatment.
Anatomy and Modality must be exactly the values given above."""


class _Draft(Record):
    """The record the model writes (no ID: the caller gives it)."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid", serialize_by_alias=True)


async def generate_record_llm(
    judge: Judge, anatomy: str, modality: str, disease: str, *, record_id: str
) -> Record:
    """A record written by the judge's model; ValueError for a pair outside the benchmark or a
    reply that does not keep the requested anatomy and modality."""
    if (anatomy, modality) not in PAIRS:
        raise ValueError(f"{anatomy} {modality} is not one of the benchmark's 22 anatomy-modality pairs")
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": INSTRUCTIONS.format(anatomy=anatomy, modality=modality, disease=disease)},
    ]
    answer = await judge.ask(messages, _Draft)
    draft = answer.output
    if (draft.anatomy, draft.modality) != (anatomy, modality):
        raise ValueError(
            f"the model wrote a {draft.anatomy} {draft.modality} record for a {anatomy} {modality} request: "
            f"{answer.raw[:300]}"
        )
    return Record.model_validate({**draft.model_dump(by_alias=True, exclude={"id"}), "ID": record_id})
