"""The eleven questions of a record, one per task, and their reference answers.

Questions are asked as a clinician would, with a few phrasings per task chosen by a
seeded random generator, and never reveal what the tools must find (RadA-BenchPlat's rule):
no anatomy, modality, disease, finding, organ, measurement or score appears in a
question, so the agent has to classify the image and run the chain.
:func:`question_leaks` lists any such value found in a question (the tests check every
generated question).

Reference answers are short and grounded in the record; masks are written as the
placeholders ``[Organ Mask]`` and ``[Anomaly Mask]``, as in RadA-BenchPlat's QA pairs.
"""

from __future__ import annotations

import random
import re

from clineval.environments.radbench.model import QAPair, Record
from clineval.environments.radbench.vocab import TASKS

QUESTIONS: dict[str, tuple[str, ...]] = {
    "012": (
        "Please delineate the main organ structures on this examination and return their masks.",
        "Could you segment the relevant organs in the image we just acquired?",
        "I need the organ contours on this study for planning; can you segment them?",
    ),
    "013": (
        "Is there anything abnormal on this image? Please locate and mark it.",
        "Can you detect and outline any lesion on this examination?",
        "Please check this study for abnormalities and give me their location.",
    ),
    "014": (
        "Given the image and the patient's presentation, what is the most likely diagnosis?",
        "What disease does this examination show, read directly from the image?",
        "Can you give me a diagnosis straight from this study?",
    ),
    "0123": (
        "Please outline the relevant organs and localize any abnormality on this study.",
        "I need both the organ segmentation and the location of any lesion on this image.",
        "Can you segment the organs and then mark whatever looks abnormal?",
    ),
    "01235": (
        "Using the organ outlines and any abnormal region as clues, what disease do you infer?",
        "After segmenting the organs and finding the lesion, what is the most likely cause?",
        "Work from the segmented structures and the detected abnormality: what is the diagnosis?",
    ),
    "0126": (
        "After segmenting the relevant organ, please quantify its key measurement.",
        "Could you measure the organ that matters most on this examination?",
        "What is the main quantitative biomarker of the relevant organ on this study?",
    ),
    "0136": (
        "Find the abnormality on this image and measure it, please.",
        "How large is the lesion on this study, or what is its key measurement?",
        "Please quantify the abnormal finding once you have located it.",
    ),
    "01348": (
        "Please write a radiology report for this examination.",
        "Could you draft the report of this study, with findings and impression?",
        "I need a formal report for this image.",
    ),
    "0123568": (
        "Please write a report that includes measurements of the relevant organ and of the abnormality.",
        "Draft a report for this study that states the organ and lesion measurements.",
        "I need a report with the key quantitative biomarkers of this examination.",
    ),
    "01235678": (
        "Please write a report with the key measurements and the appropriate clinical score or grade.",
        "Draft a complete report of this study, including biomarkers and the relevant grading system.",
        "I need a report that gives the measurements and the clinical score that applies here.",
    ),
    "012356789": (
        "Considering the imaging findings, measurements and grading, what management do you recommend?",
        "What treatment plan would you suggest for this patient after a full analysis of the study?",
        "Please analyse this examination completely and propose the next steps in management.",
    ),
}


def reference_answer(record: Record, key: str) -> str:
    """The concise reference answer of one task for one record."""
    organ = record.organ_biomarker
    lesion = record.anomaly_biomarker
    finding = f"{record.anomaly.symptom} in the {record.anomaly.part}"
    organ_measure = f"{organ.organ_object} {organ.organ_dim}: {organ.organ_quant}"
    lesion_measure = f"{lesion.anomaly_object} {lesion.anomaly_dim}: {lesion.anomaly_quant}"
    report = record.report.text()
    answers = {
        "012": f"The {organ.organ_object} is segmented [Organ Mask].",
        "013": f"{finding.capitalize()} [Anomaly Mask].",
        "014": f"The most likely diagnosis is {record.disease}.",
        "0123": f"The {organ.organ_object} is segmented [Organ Mask]; {finding} [Anomaly Mask].",
        "01235": f"{finding.capitalize()} [Anomaly Mask] with the {organ.organ_object} [Organ Mask] "
        f"indicates {record.disease}.",
        "0126": f"{organ_measure} [Organ Mask].",
        "0136": f"{lesion_measure} [Anomaly Mask].",
        "01348": report,
        "0123568": f"{report} Measurements: {organ_measure}; {lesion_measure}.",
        "01235678": f"{report} Measurements: {organ_measure}; {lesion_measure}. "
        f"{record.indicator.name}: {record.indicator.value}.",
        "012356789": record.treatment,
    }
    return answers[key]


def questions_for(record: Record, *, seed: int) -> dict[str, QAPair]:
    """The 11 QA pairs of a record (task key → pair); the phrasing is chosen by ``seed``."""
    rng = random.Random(f"{seed}:{record.id}")
    return {
        t.key: QAPair(
            record_id=record.id,
            task=t.key,
            question=rng.choice(QUESTIONS[t.key]),
            answer=reference_answer(record, t.key),
        )
        for t in TASKS
    }


_MODALITY_WORDS = {
    "X-ray": ("x-ray", "xray", "radiograph"),
    "CT": ("ct", "computed tomography"),
    "MRI": ("mri", "magnetic resonance"),
    "Ultrasound": ("ultrasound", "sonograph", "doppler"),
    "Mammography": ("mammogra",),
}


def question_leaks(record: Record, question: str) -> list[str]:
    """Values of the record that a question must not reveal but does (case-insensitive, whole words)."""
    text = question.lower()
    forbidden = [
        record.anatomy,
        record.disease,
        record.anomaly.part,
        record.anomaly.symptom,
        record.organ_biomarker.organ_object,
        record.organ_biomarker.organ_quant,
        record.anomaly_biomarker.anomaly_quant,
        record.indicator.name,
        record.indicator.value,
        *_MODALITY_WORDS.get(record.modality, (record.modality,)),
    ]
    found = []
    for value in forbidden:
        value = value.strip().lower()
        if len(value) < 2:
            continue
        if re.search(r"(?<![a-z0-9])" + re.escape(value), text):
            found.append(value)
    return found
