"""The radiology benchmark environment: tool cards, tool sets per condition, the simulator,
episodes and the reference cores (hand-built records, no record generator)."""

from __future__ import annotations

from typing import Any

import pytest

from clineval.environments.radbench.conditions import (
    CAPABILITY_TARGET,
    MISSING_CATEGORY,
    SPECIFIC_TARGET,
    build_tool_set,
)
from clineval.environments.radbench.cores import GreedyCore, OracleCore, RandomCore
from clineval.environments.radbench.episode import run_episode
from clineval.environments.radbench.model import (
    Call,
    Episode,
    EpisodeView,
    Malformed,
    NoCall,
    Plan,
    QAPair,
    Record,
    ToolCard,
    ToolSet,
)
from clineval.environments.radbench.simulator import ToolEnvironment, matches_gap
from clineval.environments.radbench.tools import (
    adjust_performance,
    make_card,
    performance_rank,
    rank_of,
    restrict,
    suitable,
    task_steps,
)
from clineval.environments.radbench.vocab import (
    CONDITIONS,
    INITIAL_VARIABLES,
    PAIRS,
    TASKS,
    UNSOLVABLE_CONDITIONS,
    Category,
    task,
)

C = Category

# fixtures -----------------------------------------------------------------------------

_BY_ANATOMY: dict[str, dict[str, str]] = {
    "Head and Neck": {"organ": "Thyroid gland", "anomaly": "Nodule", "disease": "Sinusitis"},
    "Chest": {"organ": "Left lung", "anomaly": "Consolidation", "disease": "Lobar pneumonia"},
    "Breast": {"organ": "Left breast", "anomaly": "Spiculated mass", "disease": "Invasive ductal carcinoma"},
    "Abdomen and Pelvis": {"organ": "Liver", "anomaly": "Hypodense lesion", "disease": "Hepatic cyst"},
    "Limb": {"organ": "Left femur", "anomaly": "Cortical break", "disease": "Femoral fracture"},
    "Spine": {"organ": "L4 vertebra", "anomaly": "Disc protrusion", "disease": "Lumbar disc herniation"},
}


def record_dict(anatomy: str, modality: str, index: int = 0) -> dict[str, Any]:
    """A small synthetic record of one anatomy-modality pair (published field names)."""
    v = _BY_ANATOMY[anatomy]
    return {
        "ID": f"test-{anatomy}-{modality}-{index}".replace(" ", "_"),
        "Information": {
            "Age": "54",
            "Sex": "Female",
            "Height": "165",
            "Weight": "62",
            "History": "hypertension",
            "Complaint": f"pain in the {anatomy.lower()} region",
        },
        "Anatomy": anatomy,
        "Modality": modality,
        "Anomaly": {"Part": v["organ"], "Symptom": v["anomaly"]},
        "Disease": v["disease"],
        "OrganBiomarker": {"OrganObject": v["organ"], "OrganDim": "size", "OrganQuant": "4.2 cm"},
        "AnomalyBiomarker": {"AnomalyObject": v["anomaly"], "AnomalyDim": "Density", "AnomalyQuant": "35 HU"},
        "Indicator": {"Name": "TNM Staging", "Value": "T1N0M0"},
        "Report": {
            "Finding": f"{v['anomaly']} in the {v['organ'].lower()}.",
            "Impression": f"{v['disease']}.",
        },
        "Treatment": "Follow-up imaging in 3 months.",
    }


RECORDS: dict[tuple[str, str], Record] = {
    pair: Record.model_validate(record_dict(*pair, index=i)) for i, pair in enumerate(PAIRS)
}
FEW_PAIRS = [("Chest", "X-ray"), ("Breast", "Mammography"), ("Spine", "MRI"), ("Limb", "Ultrasound")]
QUESTIONS: dict[str, str] = {
    "012": "Identify and segment the main organ visible in this image.",
    "013": "Locate any abnormal region in this image.",
    "014": "What is the most likely diagnosis for this patient based on the image?",
    "0123": "Segment the organs and localize any anomaly in this image.",
    "01235": "Using organ segmentation and the findings as clues, what disease does the patient have?",
    "0126": "Measure the size of the main organ in this image.",
    "0136": "Quantify the lesion seen in this image.",
    "01348": "Write a radiology report for this examination.",
    "0123568": "Write a report that includes the organ and lesion measurements.",
    "01235678": "Write a comprehensive report with biomarkers and the relevant clinical grading score.",
    "012356789": "What treatment do you recommend for this patient?",
}
SIZES: dict[str, tuple[int, int]] = {
    "baseline": (12, 12),
    "redundant_regular": (12, 15),
    "redundant_medium": (27, 34),
    "redundant_high": (169, 169),
    "insufficient_1": (14, 17),
    "insufficient_2": (15, 17),
    "insufficient_3": (18, 18),
    "differentiated": (17, 18),
}


def qa_for(record: Record, key: str) -> QAPair:
    return QAPair(record_id=record.id, task=key, question=QUESTIONS[key], answer="reference answer")


def names(tool_set: ToolSet) -> list[str]:
    return [t.name for t in tool_set.tools]


def produced_somewhere(tools: list[ToolCard]) -> set[str]:
    return set(INITIAL_VARIABLES) | {v for t in tools for v in t.outputs}


# tool cards ---------------------------------------------------------------------------


def test_card_numbers_follow_the_study_table() -> None:
    assert (
        make_card(C.ORGAN_SEGMENTOR).lower,
        make_card(C.ORGAN_SEGMENTOR, anatomy="Chest", modality="CT").lower,
    ) == (
        0.80,
        0.85,
    )
    rg = make_card(C.REPORT_GENERATOR, anatomy="Chest", modality="CT", report_type="text_mask")
    assert (rg.lower, rg.upper, rg.step, rg.compulsory) == (0.40, 0.88, 0.04, ["$Image$"])
    assert "$ValueName$" not in rg.optional and {"$IndicatorName$", "$IndicatorValue$"} <= set(rg.optional)
    tr = make_card(C.TREATMENT_RECOMMENDER)
    assert {"$IndicatorName$", "$IndicatorValue$"} <= set(tr.optional) and tr.compulsory == [
        "$Information$",
        "$Report$",
    ]
    ie = make_card(C.INDICATOR_EVALUATOR, kind="anomaly")
    assert "$IndicatorName$" not in ie.compulsory and ie.optional == ["$IndicatorName$"]
    assert ie.outputs == ["$IndicatorName$", "$IndicatorValue$"]
    assert ie.compulsory == ["$Image$", "$Information$", "$AnomalyObject$", "$AnomalyDim$", "$AnomalyQuant$"]
    # the study's worked numbers for label-restricted variants
    assert adjust_performance(0.85, 0.85, 5) == (0.91, 0.91)
    assert adjust_performance(0.85, 0.85, 4) == (0.92, 0.92)
    assert adjust_performance(0.85, 0.85, 1) == (0.95, 0.95)
    with pytest.raises(ValueError):
        make_card(C.DISEASE_INFERENCER, anatomy="Chest", modality="CT")


def test_suitable_and_rank() -> None:
    record = RECORDS[("Chest", "CT")]
    universal = make_card(C.ORGAN_SEGMENTOR, name="TOOL1")
    specific = make_card(C.ORGAN_SEGMENTOR, anatomy="Chest", modality="CT", name="TOOL2")
    other = make_card(C.ORGAN_SEGMENTOR, anatomy="Chest", modality="MRI", name="TOOL3")
    with_label = restrict(specific, ["Liver", "Left lung", "Heart"]).model_copy(update={"name": "TOOL4"})
    without = restrict(specific, ["Liver", "Heart"]).model_copy(update={"name": "TOOL5"})
    tools = [universal, specific, other, with_label, without]
    assert [suitable(t, record) for t in tools] == [True, True, False, True, False]
    assert [t.name for t in performance_rank(tools, record, C.ORGAN_SEGMENTOR)] == ["TOOL4", "TOOL2", "TOOL1"]
    assert rank_of(with_label, tools, record) == (1, 3)
    assert rank_of(universal, tools, record) == (3, 3)
    assert rank_of(other, tools, record) == (None, 3)
    twin = universal.model_copy(update={"name": "TOOL6"})
    assert rank_of(twin, [*tools, twin], record) == rank_of(universal, [*tools, twin], record) == (3, 4)


def test_biomarker_kinds_do_not_compete_but_indicator_kinds_do() -> None:
    record = RECORDS[("Chest", "CT")]
    tools = [
        make_card(C.BIOMARKER_QUANTIFIER, kind="organ", name="TOOL1"),
        make_card(C.BIOMARKER_QUANTIFIER, kind="anomaly", name="TOOL2"),
        make_card(C.INDICATOR_EVALUATOR, kind="organ", name="TOOL3"),
        make_card(C.INDICATOR_EVALUATOR, kind="anomaly", name="TOOL4"),
    ]
    assert rank_of(tools[0], tools, record) == (1, 1)
    assert rank_of(tools[3], tools, record) == (1, 2)
    assert [s.kind for s in task_steps("0123568") if s.category == C.BIOMARKER_QUANTIFIER] == [
        "organ",
        "anomaly",
    ]
    assert [s.kind for s in task_steps("0136") if s.category == C.BIOMARKER_QUANTIFIER] == ["anomaly"]


# tool sets ----------------------------------------------------------------------------


@pytest.mark.parametrize("condition", CONDITIONS)
def test_tool_set_sizes_for_every_pair_and_task(condition: str) -> None:
    low, high = SIZES[condition]
    seen = set()
    for pair in PAIRS:
        record = RECORDS[pair]
        for spec in TASKS:
            tool_set = build_tool_set(condition, record, spec.key, seed=7)  # type: ignore[arg-type]
            n = len(tool_set.tools)
            seen.add(n)
            assert low <= n <= high, (condition, pair, spec.key, n)
            assert sorted(names(tool_set), key=lambda s: int(s[4:])) == [f"TOOL{i}" for i in range(1, n + 1)]
            assert tool_set.solvable == (condition not in UNSOLVABLE_CONDITIONS)
            _check_invariants(condition, record, spec.key, tool_set)
    if condition == "redundant_medium":
        assert min(seen) == 27  # Breast-Mammography no longer falls to 23


def _check_invariants(condition: str, record: Record, key: str, tool_set: ToolSet) -> None:
    tools = tool_set.tools
    producible = produced_somewhere(tools)
    steps = task_steps(key)
    if tool_set.gap is None:
        for card in tools:  # every compulsory input can be obtained (IndicatorName fix)
            assert set(card.compulsory) <= producible, (condition, card)
        for step in steps:
            assert performance_rank(tools, record, step.category, step.kind), (condition, key, step)
        if condition == "differentiated":
            target = CAPABILITY_TARGET[key]
            ranked = performance_rank(tools, record, target.category, target.kind)
            assert (ranked[0].upper, ranked[0].lower) > (ranked[1].upper, ranked[1].lower)
            assert ranked[0].labels is not None  # the restricted tool holding the true label
        return
    gap = tool_set.gap
    first = next(i for i, s in enumerate(steps) if not performance_rank(tools, record, s.category, s.kind))
    assert steps[first].category == gap.category, (condition, key, gap)
    if condition == "insufficient_1":
        assert gap.kind == "CategoryMissing" and gap.category == MISSING_CATEGORY[key].category
        assert gap.category in task(key).categories  # never removes a category the task does not need
        assert not [t for t in tools if t.category == gap.category]
    elif condition == "insufficient_2":
        assert gap.kind == "SpecificToolMissing" and gap.category == SPECIFIC_TARGET[key]
        assert (gap.anatomy, gap.modality) == (record.anatomy, record.modality)
        target = [t for t in tools if t.category == gap.category]
        assert target and all(not t.universal for t in target)
        if C.DISEASE_INFERENCER in task(key).chain:
            assert any(t.category == C.DISEASE_INFERENCER for t in tools)
    else:
        assert gap.kind == "InsufficientCapability" and gap.label_field is not None
        assert gap.needed_label == record.value_of(
            {
                "organ": "$OrganObject$",
                "anomaly": "$AnomalyObject$",
                "disease": "$Disease$",
                "organ_dim": "$OrganDim$",
                "anomaly_dim": "$AnomalyDim$",
                "indicator": "$IndicatorName$",
            }[gap.label_field]
        )
        restricted = [t for t in tools if t.labels is not None]
        assert restricted and all(3 <= len(t.labels or []) <= 5 for t in restricted)
        for card in restricted:
            assert all(label.casefold() != (gap.needed_label or "").casefold() for label in card.labels or [])


def test_insufficient_3_excludes_the_true_label_ignoring_case() -> None:
    record = RECORDS[("Chest", "CT")]  # organ dim "size"; the vocabulary has "Size"
    for seed in range(20):
        tool_set = build_tool_set("insufficient_3", record, "0126", seed=seed)
        (labelled,) = [card for card in tool_set.tools if card.labels is not None]  # one of 18 has labels
        assert labelled.labels is not None and "size" not in [x.casefold() for x in labelled.labels]


def test_tool_sets_are_reproducible_and_seeded() -> None:
    record = RECORDS[("Abdomen and Pelvis", "CT")]
    for condition in CONDITIONS:
        a = build_tool_set(condition, record, "0123568", seed=3)
        b = build_tool_set(condition, record, "0123568", seed=3)
        assert a.model_dump() == b.model_dump()
        orders = {tuple(names(build_tool_set(condition, record, "0123568", seed=s))) for s in range(4)}
        assert len(orders) > 1, condition
    # the global random state plays no part
    import random

    random.seed(1)
    x = build_tool_set("redundant_medium", record, "013", seed=11)
    random.seed(2)
    assert build_tool_set("redundant_medium", record, "013", seed=11) == x


def test_entity_dict_can_be_given() -> None:
    record = RECORDS[("Chest", "X-ray")]
    vocab = {
        "organ_list": ["Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Left lung"],
        "anomaly_list": ["a"],
        "disease_list": ["d"],
        "organ_dim_list": ["x"],
        "anomaly_dim_list": ["y"],
        "indicator_list": ["z"],
    }
    tool_set = build_tool_set("insufficient_3", record, "012", seed=0, entity_dict=vocab)
    labels = {x for t in tool_set.tools for x in t.labels or []}
    assert labels and labels <= {"Alpha", "Beta", "Gamma", "Delta", "Epsilon"}


# simulator ----------------------------------------------------------------------------


def _custom(*cards: ToolCard) -> ToolSet:
    named = [c.model_copy(update={"name": f"TOOL{i}"}) for i, c in enumerate(cards, start=1)]
    return ToolSet(condition="custom", seed=0, tools=named)


def _standard_env(record: Record, **kw: Any) -> ToolEnvironment:
    tools = _custom(
        make_card(C.ANATOMY_CLASSIFIER),  # TOOL1
        make_card(C.MODALITY_CLASSIFIER),  # TOOL2
        make_card(C.ORGAN_SEGMENTOR),  # TOOL3
        make_card(C.ORGAN_SEGMENTOR, anatomy=record.anatomy, modality=record.modality),  # TOOL4
        make_card(C.ORGAN_SEGMENTOR, anatomy="Spine", modality=record.modality),  # TOOL5
        make_card(C.ORGAN_SEGMENTOR, anatomy=record.anatomy, modality="MRI"),  # TOOL6
        make_card(C.ANOMALY_DETECTOR),  # TOOL7
        make_card(C.BIOMARKER_QUANTIFIER, kind="organ"),  # TOOL8
        make_card(C.REPORT_GENERATOR, report_type="text_mask"),  # TOOL9
        make_card(C.TREATMENT_RECOMMENDER),  # TOOL10
    )
    return ToolEnvironment(record, tools, **kw)


def test_each_error_kind() -> None:
    record = RECORDS[("Chest", "CT")]
    env = _standard_env(record)
    before = dict(env.memory)

    def run(tool: str, *inputs: str) -> str | None:
        step = env.execute(Call(tool=tool, inputs=list(inputs)))
        if not step.ok:
            assert step.outputs == {} and step.score is None
        return step.error_kind

    assert run("TOOL99", "$Image$") == "unknown_tool"
    assert run("TOOL4", "$Image$") == "anatomy_mismatch"  # anatomy not known yet
    assert run("TOOL3", "$Image$", "$Anatomy$", "$Modality$") == "unavailable_input"
    assert env.memory == before
    assert run("TOOL1", "$Image$", "$Information$") == "invalid_input"
    assert run("TOOL1") == "missing_input"
    assert run("TOOL1", "$Image$") is None
    assert run("TOOL4", "$Image$") == "modality_mismatch"  # modality not known yet
    assert run("TOOL5", "$Image$") == "anatomy_mismatch"  # Spine tool on a chest image
    assert run("TOOL2", "Image") is None  # a bare name is read as $Image$
    assert run("TOOL6", "$Image$") == "modality_mismatch"  # MRI tool on a CT image
    assert run("TOOL3", "$Image$") == "missing_input"
    assert run("TOOL3", "$Image$", "$Anatomy$", "$Modality$", "$Report$") == "invalid_input"
    assert run("TOOL4", "$Image$") is None
    assert run("TOOL8", "$Image$", "$OrganObject$", "$OrganMask$", "$IndicatorValue$") == "invalid_input"
    kinds = [s.error_kind for s in env.steps]
    assert {"unknown_tool", "anatomy_mismatch", "modality_mismatch", "missing_input"} <= set(kinds)
    assert {"unavailable_input", "invalid_input"} <= set(kinds)
    assert [s.rank for s in env.steps if s.tool == "TOOL4"][-1] == 1
    assert env.steps[0].rank is None and env.steps[0].n_suitable is None


def test_scores_follow_the_worked_check() -> None:
    """The study's worked check on the baseline: 0.95, 0.95, 0.76, 0.7125, 0.57, 0.5359, 0.4287."""
    record = RECORDS[("Chest", "CT")]
    env = _standard_env(record)
    calls = [
        ("TOOL1", ["$Image$"]),
        ("TOOL2", ["$Image$"]),
        ("TOOL3", ["$Image$", "$Anatomy$", "$Modality$"]),
        ("TOOL7", ["$Image$", "$Anatomy$", "$Modality$"]),
        ("TOOL8", ["$Image$", "$OrganObject$", "$OrganMask$"]),
        (
            "TOOL9",
            [
                "$Image$",
                "$Anatomy$",
                "$Modality$",
                "$Information$",
                "$OrganObject$",
                "$AnomalyObject$",
                "$OrganDim$",
                "$OrganQuant$",
                "$OrganMask$",
                "$AnomalyMask$",
                "$Disease$",  # optional but not in the bank: ignored
            ],
        ),
        ("TOOL10", ["$Information$", "$Report$"]),
    ]
    scores = []
    for tool, inputs in calls:
        step = env.execute(Call(tool=tool, inputs=inputs))
        assert step.ok, step.error
        scores.append(step.score)
    assert scores == pytest.approx([0.95, 0.95, 0.76, 0.7125, 0.57, 0.5359, 0.42872])
    assert env.scores["$Report$"] == pytest.approx(0.5359)
    assert env.memory["$Report$"] == record.report.text()
    # the optional dimension raises the quantifier's score by step x score
    again = env.execute(Call(tool="TOOL8", inputs=["$Image$", "$OrganObject$", "$OrganMask$", "$OrganDim$"]))
    assert again.score == pytest.approx(0.57 + 0.05 * 0.57)


def test_score_is_capped_at_the_upper_bound() -> None:
    record = RECORDS[("Chest", "CT")]
    card = ToolCard(
        name="",
        category=C.TREATMENT_RECOMMENDER,
        compulsory=["$Information$"],
        optional=["$Image$"],
        outputs=["$Treatment$"],
        lower=0.5,
        upper=0.6,
        step=0.2,
    )
    env = ToolEnvironment(record, _custom(card))
    assert env.execute(Call(tool="TOOL1", inputs=["$Information$"])).score == pytest.approx(0.5)
    assert env.execute(Call(tool="TOOL1", inputs=["$Information$", "$Image$"])).score == pytest.approx(0.6)


def test_label_restricted_tool_answers_wrong_without_the_true_label() -> None:
    record = RECORDS[("Chest", "CT")]
    lacking = restrict(make_card(C.ORGAN_SEGMENTOR, anatomy="Chest", modality="CT"), ["Liver", "Heart"])
    holding = restrict(make_card(C.ORGAN_SEGMENTOR, anatomy="Chest", modality="CT"), ["Heart", "left LUNG"])
    dims = restrict(make_card(C.BIOMARKER_QUANTIFIER, kind="organ"), ["Volume", "Density"])
    env = ToolEnvironment(
        record,
        _custom(make_card(C.ANATOMY_CLASSIFIER), make_card(C.MODALITY_CLASSIFIER), lacking, holding, dims),
    )
    env.execute(Call(tool="TOOL1", inputs=["$Image$"]))
    env.execute(Call(tool="TOOL2", inputs=["$Image$"]))
    wrong = env.execute(Call(tool="TOOL3", inputs=["$Image$"]))
    assert wrong.ok and wrong.rank is None and wrong.n_suitable == 1
    assert wrong.outputs == {"$OrganMask$": "[organ mask: Liver]", "$OrganObject$": "Liver"}
    assert env.memory["$OrganObject$"] == "Liver"
    right = env.execute(Call(tool="TOOL4", inputs=["$Image$"]))
    assert right.outputs["$OrganObject$"] == "Left lung" and right.rank == 1
    measured = env.execute(Call(tool="TOOL5", inputs=["$Image$", "$OrganObject$", "$OrganMask$"]))
    assert measured.outputs["$OrganDim$"] == "Volume"
    assert measured.outputs["$OrganQuant$"] != record.organ_biomarker.organ_quant


def test_no_ground_truth_without_execution() -> None:
    record = RECORDS[("Chest", "CT")]
    env = _standard_env(record)
    assert set(env.memory) == set(INITIAL_VARIABLES)
    # naming variables and tools never writes a value; failing calls write nothing
    env.execute(
        Call(tool="TOOL3", inputs=["$Image$", "$Anatomy$", "$Modality$", "$Disease$"], purpose="$Disease$")
    )
    env.execute(Call(tool="TOOL10", inputs=["$Information$", "$Report$", "$Treatment$"]))
    env.decline(NoCall(category=C.DISEASE_DIAGNOSER, ability="CategoryMissing"))
    assert set(env.memory) == set(INITIAL_VARIABLES)
    values = " ".join(env.memory.values())
    for secret in (record.disease, record.treatment, record.anatomy + " " + record.modality + " x"):
        assert secret not in values


async def test_plan_naming_variables_does_not_leak() -> None:
    class Namer:
        name = "namer"
        privileged = False

        async def plan(self, view: EpisodeView) -> Plan | Malformed:
            return Plan(
                known=["$Anatomy$", "$Modality$", "$Disease$"], chain=[C.DISEASE_DIAGNOSER], raw="$Disease$"
            )

        async def act(self, view: EpisodeView) -> Call | NoCall | Malformed:
            assert set(view.memory) == set(INITIAL_VARIABLES)
            assert view.privileged is None
            return NoCall(category=C.DISEASE_DIAGNOSER, ability="CategoryMissing")

        async def conclude(self, view: EpisodeView) -> str:
            return "no"

    record = RECORDS[("Chest", "CT")]
    tool_set = build_tool_set("baseline", record, "014", seed=0)
    episode = await run_episode(Namer(), record, qa_for(record, "014"), tool_set)
    assert episode.finished == "nocall" and set(episode.memory) == set(INITIAL_VARIABLES)


class Looper:
    """Calls the anatomy classifier forever."""

    name = "looper"
    privileged = False

    async def plan(self, view: EpisodeView) -> Plan | Malformed:
        return Plan(chain=[C.ANATOMY_CLASSIFIER])

    async def act(self, view: EpisodeView) -> Call | NoCall | Malformed:
        tool = next(t for t in view.tools if t.category == C.ANATOMY_CLASSIFIER)
        return Call(tool=tool.name, inputs=["$Image$"])

    async def conclude(self, view: EpisodeView) -> str:
        return "anatomy: " + view.memory.get("$Anatomy$", "?")


async def test_step_limit_ends_the_episode() -> None:
    record = RECORDS[("Spine", "CT")]
    tool_set = build_tool_set("baseline", record, "012", seed=0)
    episode = await run_episode(Looper(), record, qa_for(record, "012"), tool_set, step_limit=5)
    assert episode.finished == "step_limit" and len(episode.steps) == 5
    assert episode.answer == "anatomy: Spine"
    env = ToolEnvironment(record, tool_set, step_limit=1)
    ac = next(t.name for t in tool_set.tools if t.category == C.ANATOMY_CLASSIFIER)
    assert env.execute(Call(tool=ac, inputs=["$Image$"])).ok
    refused = env.execute(Call(tool=ac, inputs=["$Image$"]))
    assert refused.error_kind == "step_limit" and len(env.steps) == 1
    with pytest.raises(ValueError):
        ToolEnvironment(record, tool_set, step_limit=0)


async def test_core_errors_and_malformed_replies_end_the_episode() -> None:
    class Broken(Looper):
        name = "broken"

        def __init__(self, where: str):
            self.where = where

        async def plan(self, view: EpisodeView) -> Plan | Malformed:
            if self.where == "plan":
                raise RuntimeError("no plan today")
            if self.where == "badplan":
                return Malformed(reply="???", reason="no chain")
            return await super().plan(view)

        async def act(self, view: EpisodeView) -> Call | NoCall | Malformed:
            if self.where == "act":
                raise KeyError("boom")
            if self.where == "malformed":
                return Malformed(reply="<Call>", reason="unclosed block")
            tool = next(t for t in view.tools if t.category == C.ANATOMY_CLASSIFIER)
            return Call(tool=tool.name, inputs=["$Image$"], final=True)

        async def conclude(self, view: EpisodeView) -> str:
            if self.where == "conclude":
                raise ValueError("cannot conclude")
            return "done"

    record = RECORDS[("Limb", "MRI")]
    tool_set = build_tool_set("baseline", record, "012", seed=0)
    outcomes = {}
    for where in ("plan", "badplan", "act", "malformed", "conclude"):
        episode = await run_episode(Broken(where), record, qa_for(record, "012"), tool_set)
        outcomes[where] = (episode.finished, episode.error)
    assert outcomes["plan"] == ("core_error", "plan: RuntimeError: no plan today")
    assert outcomes["badplan"] == ("no_plan", "no chain")
    assert outcomes["act"][0] == "core_error" and "KeyError" in (outcomes["act"][1] or "")
    assert outcomes["malformed"][0] == "malformed"
    assert outcomes["conclude"][0] == "core_error" and "cannot conclude" in (outcomes["conclude"][1] or "")


# automated tool building --------------------------------------------------------------


def test_auto_build_matching_and_not_matching() -> None:
    record = RECORDS[("Head and Neck", "X-ray")]
    tool_set = build_tool_set("insufficient_2", record, "013", seed=0)
    gap = tool_set.gap
    assert gap is not None and gap.category == C.ANOMALY_DETECTOR
    n = len(tool_set.tools)

    wrong = [
        NoCall(category=C.ANOMALY_DETECTOR, ability="SpecificToolMissing"),  # Universal / Universal
        NoCall(
            category=C.ANOMALY_DETECTOR, anatomy="Head and Neck", modality="CT", ability="SpecificToolMissing"
        ),
        NoCall(
            category=C.ORGAN_SEGMENTOR,
            anatomy="Head and Neck",
            modality="X-ray",
            ability="SpecificToolMissing",
        ),
        NoCall(
            category=C.ANOMALY_DETECTOR, anatomy="Head and Neck", modality="X-ray", ability="CategoryMissing"
        ),
    ]
    for nocall in wrong:
        env = ToolEnvironment(record, tool_set, auto_build=True)
        assert env.decline(nocall).built_tool is None and len(env.tools) == n
    right = NoCall(
        category=C.ANOMALY_DETECTOR, anatomy="head and neck", modality="X-RAY", ability="SpecificToolMissing"
    )
    assert matches_gap(right, gap, record)
    env = ToolEnvironment(record, tool_set, auto_build=False)
    assert env.decline(right).built_tool is None
    env = ToolEnvironment(record, tool_set, auto_build=True)
    step = env.decline(right)
    assert step.built_tool == f"TOOL{n + 1}" and len(env.tools) == n + 1
    built = env.tool_set.by_name(step.built_tool)
    assert built is not None and built.built and suitable(built, record)
    assert len(tool_set.tools) == n  # the caller's set is untouched
    assert env.decline(right).built_tool is None  # the gap is built once
    # a solvable set has no gap to build
    solvable = ToolEnvironment(record, build_tool_set("baseline", record, "013", seed=0), auto_build=True)
    assert solvable.decline(right).built_tool is None


@pytest.mark.parametrize("condition", sorted(UNSOLVABLE_CONDITIONS))
async def test_oracle_with_auto_build_completes_unsolvable_tasks(condition: str) -> None:
    record = RECORDS[("Breast", "Ultrasound")]
    for spec in TASKS:
        tool_set = build_tool_set(condition, record, spec.key, seed=2)  # type: ignore[arg-type]
        episode = await run_episode(OracleCore(), record, qa_for(record, spec.key), tool_set, auto_build=True)
        assert episode.finished == "endcall", (condition, spec.key, episode.steps[-1])
        built = [s for s in episode.steps if s.built_tool]
        assert len(built) == 1 and all(s.ok for s in episode.steps)
        assert [s.rank for s in episode.steps if s.action != "nocall"] == [1] * len(spec.chain)


# reference cores ----------------------------------------------------------------------


def _grounded(episode: Episode) -> bool:
    gap = episode.gap
    nocalls = [s.nocall for s in episode.steps if s.nocall is not None]
    if gap is None or not nocalls:
        return False
    first = nocalls[0]
    if first.category != gap.category or first.ability != gap.kind:
        return False
    if gap.kind == "SpecificToolMissing":
        return (first.anatomy, first.modality) == (gap.anatomy, gap.modality)
    return True


def _success(episode: Episode) -> bool:
    if episode.solvable:
        calls = [s for s in episode.steps if s.action in ("call", "endcall")]
        return (
            episode.finished == "endcall"
            and all(s.ok for s in episode.steps)
            and [s.category for s in calls] == list(episode.gt_chain)
        )
    return episode.finished == "nocall" and _grounded(episode)


@pytest.mark.parametrize("pair", FEW_PAIRS)
async def test_oracle_is_perfect(pair: tuple[str, str]) -> None:
    record = RECORDS[pair]
    for condition in CONDITIONS:
        for spec in TASKS:
            tool_set = build_tool_set(condition, record, spec.key, seed=5)
            episode = await run_episode(OracleCore(), record, qa_for(record, spec.key), tool_set)
            assert _success(episode), (condition, spec.key, episode.finished, episode.steps[-1])
            assert episode.n_tools == len(tool_set.tools) and episode.gt_chain == list(spec.chain)
            assert episode.gap == tool_set.gap and episode.solvable == tool_set.solvable
            if tool_set.solvable:
                assert all(s.rank == 1 for s in episode.steps)
                assert episode.steps[-1].action == "endcall"
                assert episode.memory[spec.answer] == record.value_of(spec.answer)
                assert episode.answer and record.value_of(spec.answer) in episode.answer
            else:
                assert episode.answer and "cannot be completed" in episode.answer


async def test_baselines_are_clearly_worse_than_the_oracle() -> None:
    rates: dict[str, float] = {}
    for name in ("oracle", "greedy", "random"):
        wins = total = 0
        for i, pair in enumerate(FEW_PAIRS):
            record = RECORDS[pair]
            for condition in CONDITIONS:
                for spec in TASKS:
                    tool_set = build_tool_set(condition, record, spec.key, seed=9)
                    core = (
                        OracleCore()
                        if name == "oracle"
                        else GreedyCore()
                        if name == "greedy"
                        else RandomCore(seed=i)
                    )
                    episode = await run_episode(core, record, qa_for(record, spec.key), tool_set)
                    wins += _success(episode)
                    total += 1
        rates[name] = wins / total
    assert rates["oracle"] == 1.0
    assert rates["greedy"] < 0.6
    assert rates["random"] < rates["greedy"]


async def test_only_privileged_cores_see_the_ground_truth() -> None:
    seen: list[bool] = []

    class Spy(GreedyCore):
        async def act(self, view: EpisodeView) -> Call | NoCall | Malformed:
            seen.append(view.privileged is not None)
            return await super().act(view)

    class PrivilegedSpy(OracleCore):
        async def act(self, view: EpisodeView) -> Call | NoCall | Malformed:
            seen.append(view.privileged is not None)
            return await super().act(view)

    record = RECORDS[("Chest", "MRI")]
    tool_set = build_tool_set("baseline", record, "012", seed=0)
    await run_episode(Spy(), record, qa_for(record, "012"), tool_set)
    assert seen and not any(seen)
    seen.clear()
    await run_episode(PrivilegedSpy(), record, qa_for(record, "012"), tool_set)
    assert seen and all(seen)


async def test_episodes_are_reproducible() -> None:
    record = RECORDS[("Abdomen and Pelvis", "Ultrasound")]
    for core in ("random", "greedy", "oracle"):
        dumps = []
        for _ in range(2):
            tool_set = build_tool_set("redundant_medium", record, "01235678", seed=4)
            made = {"oracle": OracleCore(), "greedy": GreedyCore(), "random": RandomCore(seed=12)}[core]
            episode = await run_episode(made, record, qa_for(record, "01235678"), tool_set)
            dumps.append(episode.model_dump())
        assert dumps[0] == dumps[1], core
