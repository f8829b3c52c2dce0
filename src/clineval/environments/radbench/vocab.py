"""The fixed vocabulary of the radiology agent benchmark (RadA-BenchPlat): anatomies, modalities,
tool categories, memory-bank variables and the eleven tasks with their ground-truth chains.

Facts from RadA-BenchPlat: 22 anatomy-modality pairs; ten tool categories numbered 0-9; eleven
tasks whose keys are their category chains; complexity by the number of steps (simple
under 4, moderate 4 to 6, complex more than that).

Choices of this project, documented in docs/radbench.md:

* The ground-truth *execution* chain repeats the biomarker quantifier (6) when a task
  needs both the organ and the anomaly biomarker (tasks 0123568, 01235678, 012356789):
  the task key lists the categories, the chain lists the calls.
* Complexity uses the number of categories in the key: 3 → simple, 4-5 → moderate,
  7 or more → complex (RadA-BenchPlat's "fewer than 4 / 4 to 6 / 6 or more" cut points leave no
  ambiguity for these chains).
* The milestone of each task (for the milestone hit rate) is the intermediate result a
  clinician would still value if the final step failed; see ``Task.milestone``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Literal, get_args

ANATOMIES: tuple[str, ...] = ("Head and Neck", "Chest", "Breast", "Abdomen and Pelvis", "Limb", "Spine")
MODALITIES: tuple[str, ...] = ("X-ray", "CT", "MRI", "Ultrasound", "Mammography")

#: Which modalities each anatomy is imaged with: the 22 anatomy-modality pairs.
MODALITIES_BY_ANATOMY: dict[str, tuple[str, ...]] = {
    "Head and Neck": ("X-ray", "CT", "MRI", "Ultrasound"),
    "Chest": ("X-ray", "CT", "MRI", "Ultrasound"),
    "Limb": ("X-ray", "CT", "MRI", "Ultrasound"),
    "Abdomen and Pelvis": ("X-ray", "CT", "MRI", "Ultrasound"),
    "Spine": ("X-ray", "CT", "MRI"),
    "Breast": ("Mammography", "MRI", "Ultrasound"),
}
PAIRS: tuple[tuple[str, str], ...] = tuple(
    (anatomy, modality) for anatomy, modalities in MODALITIES_BY_ANATOMY.items() for modality in modalities
)
assert len(PAIRS) == 22


class Category(IntEnum):
    """The ten tool categories; the digit is the one used in task keys."""

    ANATOMY_CLASSIFIER = 0
    MODALITY_CLASSIFIER = 1
    ORGAN_SEGMENTOR = 2
    ANOMALY_DETECTOR = 3
    DISEASE_DIAGNOSER = 4
    DISEASE_INFERENCER = 5
    BIOMARKER_QUANTIFIER = 6
    INDICATOR_EVALUATOR = 7
    REPORT_GENERATOR = 8
    TREATMENT_RECOMMENDER = 9

    @property
    def title(self) -> str:
        return CATEGORY_NAMES[self]


CATEGORY_NAMES: dict[Category, str] = {
    Category.ANATOMY_CLASSIFIER: "Anatomy Classifier",
    Category.MODALITY_CLASSIFIER: "Modality Classifier",
    Category.ORGAN_SEGMENTOR: "Organ Segmentor",
    Category.ANOMALY_DETECTOR: "Anomaly Detector",
    Category.DISEASE_DIAGNOSER: "Disease Diagnoser",
    Category.DISEASE_INFERENCER: "Disease Inferencer",
    Category.BIOMARKER_QUANTIFIER: "Biomarker Quantifier",
    Category.INDICATOR_EVALUATOR: "Indicator Evaluator",
    Category.REPORT_GENERATOR: "Report Generator",
    Category.TREATMENT_RECOMMENDER: "Treatment Recommender",
}

#: Variables of the memory bank, written ``$Name$`` as in RadA-BenchPlat's prompts.
VARIABLES: tuple[str, ...] = (
    "$Image$",
    "$Information$",
    "$Anatomy$",
    "$Modality$",
    "$OrganMask$",
    "$OrganObject$",
    "$OrganDim$",
    "$OrganQuant$",
    "$AnomalyMask$",
    "$AnomalyObject$",
    "$AnomalyDim$",
    "$AnomalyQuant$",
    "$Disease$",
    "$IndicatorName$",
    "$IndicatorValue$",
    "$Report$",
    "$Treatment$",
)
#: What every episode starts with in its memory bank.
INITIAL_VARIABLES: tuple[str, ...] = ("$Image$", "$Information$")

Complexity = Literal["simple", "moderate", "complex"]
GapKind = Literal["CategoryMissing", "SpecificToolMissing", "InsufficientCapability"]
GAP_KINDS: tuple[GapKind, ...] = ("CategoryMissing", "SpecificToolMissing", "InsufficientCapability")


@dataclass(frozen=True)
class Task:
    """One of the eleven tasks."""

    key: str
    """The category digits, e.g. ``"0126"`` (also the key of the QA pair in published data)."""
    number: int
    name: str
    chain: tuple[Category, ...]
    """The ground-truth execution chain (the biomarker quantifier twice when both biomarkers are needed)."""
    milestone: Category
    answer: str
    """What the final answer holds: the memory-bank variable(s) the question asks for."""

    @property
    def categories(self) -> tuple[Category, ...]:
        return tuple(Category(int(d)) for d in self.key)

    @property
    def target(self) -> Category:
        """The category whose output answers the question (the last step)."""
        return self.chain[-1]

    @property
    def complexity(self) -> Complexity:
        n = len(self.key)
        if n < 4:
            return "simple"
        if n <= 6:
            return "moderate"
        return "complex"


C = Category
TASKS: tuple[Task, ...] = (
    Task("012", 1, "organ segmentation", (C(0), C(1), C(2)), C(2), "$OrganMask$"),
    Task("013", 2, "anomaly detection", (C(0), C(1), C(3)), C(3), "$AnomalyMask$"),
    Task("014", 3, "end-to-end diagnosis", (C(0), C(1), C(4)), C(4), "$Disease$"),
    Task("0123", 4, "organ and anomaly joint grounding", (C(0), C(1), C(2), C(3)), C(2), "$AnomalyMask$"),
    Task("01235", 5, "diagnosis with grounding clues", (C(0), C(1), C(2), C(3), C(5)), C(3), "$Disease$"),
    Task("0126", 6, "organ biomarker calculation", (C(0), C(1), C(2), C(6)), C(2), "$OrganQuant$"),
    Task("0136", 7, "anomaly biomarker calculation", (C(0), C(1), C(3), C(6)), C(3), "$AnomalyQuant$"),
    Task("01348", 8, "report generation", (C(0), C(1), C(3), C(4), C(8)), C(4), "$Report$"),
    Task(
        "0123568",
        9,
        "report focused on biomarkers",
        (C(0), C(1), C(2), C(3), C(5), C(6), C(6), C(8)),
        C(5),
        "$Report$",
    ),
    Task(
        "01235678",
        10,
        "report focused on biomarkers and indicators",
        (C(0), C(1), C(2), C(3), C(5), C(6), C(6), C(7), C(8)),
        C(7),
        "$Report$",
    ),
    Task(
        "012356789",
        11,
        "treatment planning",
        (C(0), C(1), C(2), C(3), C(5), C(6), C(6), C(7), C(8), C(9)),
        C(8),
        "$Treatment$",
    ),
)
TASKS_BY_KEY: dict[str, Task] = {t.key: t for t in TASKS}


def task(key: str) -> Task:
    """The task with this key (``"0126"``) or number (``"6"``)."""
    if key in TASKS_BY_KEY:
        return TASKS_BY_KEY[key]
    for t in TASKS:
        if key == str(t.number):
            return t
    raise KeyError(f"no task {key!r}: use one of {', '.join(TASKS_BY_KEY)}")


Condition = Literal[
    "baseline",
    "redundant_regular",
    "redundant_medium",
    "redundant_high",
    "insufficient_1",
    "insufficient_2",
    "insufficient_3",
    "differentiated",
]
CONDITIONS: tuple[Condition, ...] = get_args(Condition)
UNSOLVABLE_CONDITIONS: frozenset[str] = frozenset({"insufficient_1", "insufficient_2", "insufficient_3"})
