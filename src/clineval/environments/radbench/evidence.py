"""The radiology benchmark's evidence view, beside its metrics (:mod:`.metrics`).

An episode (the case's ``agent_output.episode``): the plan against the ground-truth chain
of tool categories, every step with the tool it used, the memory bank as it grew, the
answer against the reference. Registered when the viewer first looks a view up
(:data:`clineval.plugins.BUILTIN_EVIDENCE`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from markupsafe import Markup

from clineval.environments.radbench.model import Episode
from clineval.environments.radbench.vocab import CATEGORY_NAMES, Category
from clineval.evidence.html import as_text, block_text, fmt, h, join, missing_note
from clineval.evidence.registry import EvidenceContext, evidence_view
from clineval.evidence.widgets import chip, kv_table
from clineval.model import Case

__all__: list[str] = []


def _episode(case: Case) -> Episode | None:
    output = case.metadata.get("agent_output")
    if not (isinstance(output, dict) and isinstance(output.get("episode"), dict)):
        return None
    try:
        return Episode.model_validate(output["episode"])
    except Exception:
        return None


_FINISH_WORDS = {
    "endcall": ("the core ended with an EndCall", "ev-v-entailed"),
    "nocall": ("the core declined (NoCall)", "ev-v-partial"),
    "step_limit": ("the step limit was reached", "ev-v-not-entailed"),
    "io_error": ("a call failed: the chain is broken", "ev-v-contradicted"),
    "malformed": ("a reply could not be read", "ev-v-contradicted"),
    "no_plan": ("the plan could not be read", "ev-v-contradicted"),
    "core_error": ("the core raised an error", "ev-v-contradicted"),
}


def _category(value: Any) -> str:
    """A radiology tool category by name (``Organ Segmentor``), whatever form it is stored in."""
    if value is None:
        return ""
    try:
        return CATEGORY_NAMES[Category(int(value))]
    except Exception:
        return as_text(value)


def _readable(data: Mapping[str, Any]) -> dict[str, Any]:
    """A radiology record (gap, NoCall) with categories by name and empty fields left out."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if value in (None, "", []):
            continue
        out[key.replace("_", " ")] = _category(value) if key == "category" else value
    return out


def _render_radbench(ctx: EvidenceContext, episode: Episode) -> Markup:
    finish_words, finish_cls = _FINISH_WORDS.get(episode.finished, (episode.finished, "ev-v-na"))
    meta = [
        h("span", f"record {episode.record_id}", class_="ev-meta-item"),
        h("span", f"task {episode.task}", class_="ev-meta-item"),
        h("span", f"condition {episode.condition}", class_="ev-meta-item"),
        h("span", f"core {episode.core}", class_="ev-meta-item"),
        h("span", f"{episode.n_tools} tool(s) offered", class_="ev-meta-item"),
        h("span", "solvable" if episode.solvable else "unsolvable with these tools", class_="ev-meta-item"),
    ]
    parts: list[Any] = [
        h("div", meta, class_="ev-meta"),
        h(
            "p",
            chip(episode.finished, finish_cls),
            " ",
            finish_words,
            h("span", f" — {episode.error}", class_="ev-why") if episode.error else None,
            class_="ev-finish",
        ),
    ]
    if episode.gap is not None:
        gap = _readable(episode.gap.model_dump(mode="json"))
        parts.append(
            h(
                "details",
                h("summary", "What the tool set lacks (the gap)"),
                kv_table(gap),
                class_="ev-fold",
                open=True,
            )
        )
    # plan
    gt = list(episode.gt_chain)
    if episode.plan is None:
        parts.append(h("h4", "Plan"))
        parts.append(h("p", "No plan.", class_="ev-empty"))
    else:
        chain = list(episode.plan.chain)
        plan_items = [
            h(
                "li",
                _category(c),
                class_="ev-chain-step " + ("ev-t-match" if k < len(gt) and gt[k] == c else "ev-t-args"),
            )
            for k, c in enumerate(chain)
        ]
        gt_items = [h("li", _category(c), class_="ev-chain-step") for c in gt]
        parts.append(h("h4", "Plan: the chain of tool categories"))
        parts.append(
            h(
                "div",
                h(
                    "div",
                    h("h5", "Planned"),
                    h("ol", plan_items, class_="ev-chain") if plan_items else missing_note("empty"),
                ),
                h("div", h("h5", "Ground truth"), h("ol", gt_items, class_="ev-chain")),
                class_="ev-two",
            )
        )
        if episode.plan.known:
            parts.append(h("p", "Known from the question: ", ", ".join(episode.plan.known), class_="ev-hint"))
        if episode.plan.raw:
            parts.append(
                h(
                    "details",
                    h("summary", "The plan as written"),
                    h("pre", episode.plan.raw, class_="ev-pre"),
                    class_="ev-fold",
                )
            )
    # steps with the memory bank as it grows
    memory: dict[str, str] = {}
    written_by: dict[str, int] = {}
    steps = []
    for step in episode.steps:
        action = {"call": "Call", "endcall": "EndCall", "nocall": "NoCall", "malformed": "Malformed"}.get(
            step.action, step.action
        )
        status_cls = (
            "ev-v-entailed"
            if step.ok
            else ("ev-v-partial" if step.action == "nocall" else "ev-v-contradicted")
        )
        card = {
            "tool": step.tool,
            "category": _category(step.category),
            "inputs": ", ".join(step.inputs) if step.inputs else None,
            "performance": fmt(step.score) if step.score is not None else None,
            "rank among suitable tools": f"{step.rank} of {step.n_suitable}"
            if step.rank is not None
            else None,
        }
        card_rows = {k: v for k, v in card.items() if v not in (None, "")}
        new = {k: v for k, v in step.outputs.items() if memory.get(k) != v}
        for k, v in step.outputs.items():
            memory[k] = v
            written_by[k] = step.index
        body: list[Any] = [
            h(
                "div",
                h("span", f"step {step.index + 1}", class_="ev-step-n"),
                chip(action, f"ev-action ev-action-{step.action}"),
                " ",
                h("code", step.tool, class_="ev-call-name") if step.tool else None,
                " ",
                chip(
                    "declined"
                    if step.action == "nocall"
                    else "ok"
                    if step.ok
                    else (step.error_kind or "failed").replace("_", " "),
                    "ev-v-partial" if step.action == "nocall" else status_cls,
                ),
                class_="ev-step-head",
            ),
        ]
        new_html = (
            h("div", h("h5", "Added to the memory bank"), kv_table(new), class_="ev-memory-new")
            if new
            else None
        )
        body.append(h("div", kv_table(card_rows) if card_rows else h("div"), new_html, class_="ev-two"))
        if step.card:
            shown = {k: ", ".join(map(str, v)) if isinstance(v, list) else v for k, v in step.card.items()}
            body.append(
                h(
                    "details",
                    h("summary", f"Tool card of {step.card.get('Name', step.tool)}, as the core saw it"),
                    kv_table(shown),
                    class_="ev-fold ev-tool-card",
                )
            )
        if step.error:
            body.append(h("p", step.error, class_="ev-why ev-error-text"))
        if step.nocall is not None:
            nocall = _readable(step.nocall.model_dump(mode="json", exclude={"raw"}))
            body.append(h("div", h("h5", "What the core says is missing"), kv_table(nocall)))
        if step.built_tool:
            body.append(h("p", f"automated tool building added {step.built_tool}", class_="ev-hint"))
        if step.reply:
            body.append(
                h(
                    "details",
                    h("summary", "The core's reply"),
                    h("pre", step.reply, class_="ev-pre"),
                    class_="ev-fold",
                )
            )
        steps.append(h("li", body, class_=f"ev-step ev-step-{step.action}", id=ctx.id("s", step.index)))
    parts.append(h("h4", f"Steps ({len(episode.steps)})"))
    parts.append(
        h("ol", steps, class_="ev-steps") if steps else h("p", "No step was taken.", class_="ev-empty")
    )
    final_memory = episode.memory or memory
    if final_memory:
        rows = [
            h(
                "tr",
                h("th", k, scope="row"),
                h("td", v),
                h("td", f"step {written_by[k] + 1}" if k in written_by else "given", class_="ev-hint"),
            )
            for k, v in final_memory.items()
        ]
        parts.append(h("h4", "Memory bank at the end"))
        parts.append(h("table", h("tbody", rows), class_="ev-kv"))
    parts.append(h("h4", "Final answer against the reference"))
    parts.append(
        h(
            "div",
            h("div", h("h5", "Answer"), block_text(episode.answer, missing="no answer")),
            h("div", h("h5", "Reference"), block_text(episode.reference_answer)),
            class_="ev-two",
        )
    )
    return join(parts)


#: The abbreviations of the benchmark's metrics (definitions as in docs/radbench.md).
ABBREVIATIONS: dict[str, str] = {
    "LD": "Levenshtein distance between chains of tool categories (plan, executed, ground truth; "
    "lower is better)",
    "FDR": "false discovery rate: share of the chain's entries whose category is not in the ground truth "
    "(lower is better)",
    "TMA": "tool matching accuracy: positions of the ground-truth chain hit by the same category / "
    "its length",
    "OTS": "optimal tool score: mean over tool selections of (N - R + 1) / N, N suitable tools, R the "
    "chosen one's rank (1 = best); an unsuitable choice scores 0",
    "ECR": "execution completion: no step failed and the chain was closed with a successful EndCall",
    "PFSP": "pre-failure success percentage: on failed episodes, successful steps before the first "
    "failure / ground-truth length",
    "THR": "target hit: no step failed and the last executed tool is of the task's target category",
    "MHR": "milestone hit: the task's milestone category ran successfully",
    "UAR": "unsolvability awareness: declined, and did not complete with the insufficient tools",
    "UGR": "unsolvability grounding: declined and the first NoCall states the gap (category, kind, pair)",
}


def legend(names: Iterable[str]) -> Markup | None:
    """The abbreviations among ``names`` (sub-score names such as ``radbench.ld_exec_gt``)."""
    used = {part.upper() for name in names for part in re.split(r"[._]", name)} & set(ABBREVIATIONS)
    if not used:
        return None
    terms = [(k, ABBREVIATIONS[k]) for k in ABBREVIATIONS if k in used]
    return h(
        "details",
        h("summary", "Abbreviations (" + ", ".join(k for k, _ in terms) + ")"),
        h("dl", [join([h("dt", k), h("dd", v)]) for k, v in terms], class_="ev-terms"),
        class_="ev-fold ev-abbreviations",
        open=True,
    )


def _is_episode(ctx: EvidenceContext) -> bool:
    return ctx.result.metric.lower() == "radbench" or (
        set(ctx.details) == {"finished"} and _episode(ctx.case) is not None
    )


@evidence_view(
    "radbench",
    title="radiology benchmark episode (RadA-BenchPlat)",
    matches=_is_episode,
    order=140,
    sub_scores_limit=None,
    when_unscored=True,
    case_keys=["episode"],
)
def radbench_view(ctx: EvidenceContext) -> Markup | None:
    episode = _episode(ctx.case)
    terms = legend(ctx.result.score.sub_scores)  # the sub-scores' abbreviations, explained
    return join([terms, _render_radbench(ctx, episode)]) if episode is not None else None
