"""Case pages in a real browser: the evidence behind each score, as a clinician reviewer sees it.

TBFact's two fact tables with the quoted evidence marked in the other text; the answer's
sentences coloured by grounding (ASTRID, RAGAS); predicted against reference tool calls;
a tumor-board conversation with the gold and chosen agent per turn; a radiology-benchmark
episode step by step.
"""

from __future__ import annotations

import re
from typing import Any

from tests.browser.helpers import Fixture, expect, open_page, shot


def test_tbfact_evidence_both_ways_with_quotes_marked(page: Any, viewer: Fixture) -> None:
    run = viewer.runs["quickstart"]
    open_page(page, viewer, f"/runs/{run}/cases/sum-001")
    expect(page.get_by_role("heading", name="Case sum-001")).to_be_visible()
    # the case's texts
    texts = page.locator("#texts")
    expect(texts.get_by_text("Summarise the following discharge summary", exact=False).first).to_be_visible()
    expect(
        texts.get_by_text("She was referred to cardiac rehabilitation.").first
    ).to_be_visible()  # a gold fact
    # the scores table links each metric to its evidence
    expect(page.locator("#results-table tr[data-metric=tbfact] td.num")).to_have_text("0.571")

    tbfact = page.locator("#metric-tbfact")
    expect(
        tbfact.get_by_text("precision 0.67 over 3 response fact(s), recall 0.50 over 8 reference")
    ).to_be_visible()
    precision = tbfact.locator(".ev-side[data-side=precision]")
    recall = tbfact.locator(".ev-side[data-side=recall]")
    expect(
        precision.get_by_role("heading", name=re.compile("Response facts checked against the reference"))
    ).to_be_visible()
    expect(
        recall.get_by_role("heading", name=re.compile("Reference facts checked against the response"))
    ).to_be_visible()
    expect(precision.locator("tr.ev-fact-row")).to_have_count(3)
    expect(recall.locator("tr.ev-fact-row")).to_have_count(8)
    # a response fact, its category, importance and verdict
    first = precision.locator("tr.ev-fact-row").first
    expect(first).to_contain_text("Diagnosis: non-ST-elevation myocardial infarction (NSTEMI).")
    expect(first).to_contain_text("diagnosis")
    expect(first).to_contain_text("high")
    expect(first.locator(".ev-verdict")).to_contain_text("entailed")  # NSTEMI is in the reference
    expect(first.locator(".ev-verdict")).not_to_contain_text("not entailed")
    partly = precision.locator("tr.ev-fact-row").nth(1)  # the angiography: part of it is not there
    expect(partly.locator(".ev-verdict")).to_contain_text("partly")
    # an omitted high-importance reference fact
    omitted = recall.locator("tr.ev-fact-row", has_text="The GP should check renal function and potassium")
    expect(omitted.locator(".ev-verdict")).to_contain_text("not in the response")
    # the quoted evidence is highlighted in the other text (the reference, for response facts)
    quoted = precision.locator("mark.ev-mark", has_text="troponin T peak 212 ng/L")
    expect(quoted).to_be_visible()
    # hovering a fact lights up the evidence it quotes (EVIDENCE_JS)
    first.hover()
    expect(first).to_have_class(re.compile(r"\bev-active\b"))
    expect(precision.locator("mark.ev-mark.ev-active").first).to_be_visible()
    shot(page, "case-tbfact")
    shot(page, "case-tbfact-evidence", doc="viewer-case-tbfact.png", element=tbfact)


def test_faithfulness_sentences_coloured_by_grounding(page: Any, viewer: Fixture) -> None:
    run = viewer.runs["patient_qa"]
    open_page(page, viewer, f"/runs/{run}/cases/qa-001")
    cf = page.locator("#metric-conversational_faithfulness")
    expect(cf.get_by_text("2 of 2 informative sentence(s) grounded")).to_be_visible()
    supported = cf.locator(".ev-answer .ev-sent.ev-v-entailed", has_text="Wear the plastic eye shield")
    expect(supported).to_be_visible()
    # ASTRID does not judge an acknowledgement; RAGAS faithfulness counts it unsupported
    ragas = page.locator("#metric-faithfulness")
    unsupported = ragas.locator(
        ".ev-answer .ev-sent.ev-v-not-entailed", has_text="Thank you for your question."
    )
    expect(unsupported).to_be_visible()
    colour = "e => getComputedStyle(e).backgroundColor"
    assert supported.evaluate(colour) != unsupported.evaluate(colour), "grounded and ungrounded look the same"
    # the legend names the colours, and the contexts show the quoted evidence
    expect(cf.locator(".ev-legend")).to_contain_text("supported")
    expect(cf.locator(".ev-contexts mark.ev-mark").first).to_be_visible()
    shot(page, "case-faithfulness")


def test_trajectory_predicted_and_reference_side_by_side(page: Any, viewer: Fixture) -> None:
    run = viewer.runs["quickstart"]
    open_page(page, viewer, f"/runs/{run}/cases/tool-006")
    traj = page.locator("#metric-trajectory_exact_match")
    expect(traj.get_by_text("not identical; extra: get_vitals(patient_id='P006')")).to_be_visible()
    table = traj.locator("table.ev-traj")
    expect(table.locator("thead th")).to_have_text(["Predicted (the agent's calls)", "", "Reference"])
    expect(table.locator("tbody tr.ev-t-row")).to_have_count(4)
    expect(table.locator("tbody tr.ev-t-match")).to_have_count(3)
    extra = table.locator("tbody tr.ev-t-extra")
    expect(extra).to_have_count(1)
    expect(extra.locator("td").nth(0)).to_contain_text("get_vitals")
    expect(extra.locator("td.ev-t-status")).to_have_text("extra")
    expect(extra.locator("td").nth(2)).to_have_text("—")
    shot(page, "case-trajectory")


def test_conversation_turns_with_gold_and_chosen_agents(page: Any, viewer: Fixture) -> None:
    run = viewer.runs["tumor_board"]
    open_page(page, viewer, f"/runs/{run}/cases/gbm-recurrence-review%23trial1")
    expect(page.get_by_role("heading", name="Case gbm-recurrence-review#trial1")).to_be_visible()
    transcript = page.locator("#texts .ev-transcript")
    # four labelled user turns (the scripted clinician's closing message has no label)
    expect(transcript.locator(".ev-msg.ev-role-user .ev-gold")).to_have_count(4)
    expect(transcript.locator(".ev-speaker", has_text="PatientHistory").first).to_be_visible()
    expect(transcript.locator(".ev-gold").first).to_have_text(
        "gold agent: PatientHistory · gold tools: load_patient_data"
    )
    agents = page.locator("#metric-agent_selection_accuracy")
    expect(agents.get_by_text("4 of 4 labelled turn(s) went to the gold agent")).to_be_visible()
    rows = agents.locator("tr.ev-turn-row")
    expect(rows).to_have_count(4)
    expect(rows.nth(1)).to_contain_text("What did the most recent MRI show")
    expect(rows.nth(1)).to_contain_text("Radiology")
    expect(rows.nth(3)).to_contain_text("ClinicalGuidelines")
    # the metrics that need an LLM judge say so instead of showing a 0
    judged = page.locator("#metric-intent_resolution")
    expect(judged).to_contain_text("unscored")
    expect(judged).to_contain_text("needs an LLM judge")
    shot(page, "case-conversation")


def test_radiology_benchmark_episode(page: Any, viewer: Fixture) -> None:
    run = viewer.runs["radbench"]
    open_page(page, viewer, f"/runs/{run}/cases/rb-0001/0123/insufficient_1")
    episode = page.locator("#metric-radbench")
    expect(episode).to_contain_text("record rb-0001")
    expect(episode).to_contain_text("condition insufficient_1")
    expect(episode.get_by_text("Plan: the chain of tool categories")).to_be_visible()
    steps = episode.locator(".ev-step")
    expect(steps).to_have_count(3)
    expect(steps.nth(0)).to_contain_text("Call")
    expect(steps.nth(0)).to_contain_text("$Anatomy$")
    expect(steps.nth(2)).to_contain_text("EndCall")
    expect(episode.get_by_text("Memory bank at the end")).to_be_visible()
    expect(episode.get_by_text("Final answer against the reference")).to_be_visible()
    expect(episode).to_contain_text("The right maxillary sinus is segmented [Organ Mask]")
    shot(page, "case-radbench")


def test_case_navigation_next_and_previous(page: Any, viewer: Fixture) -> None:
    run = viewer.runs["tumor_board"]
    open_page(page, viewer, f"/runs/{run}/cases/gbm-recurrence-review%23trial1")
    page.locator("#case-nav a.next").click()
    expect(page.get_by_role("heading", name=re.compile(r"^Case nsclc-kras-response#trial1"))).to_be_visible()
    page.locator("#case-nav").get_by_role("link", name=re.compile("previous case")).click()
    expect(
        page.get_by_role("heading", name=re.compile(r"^Case gbm-recurrence-review#trial1"))
    ).to_be_visible()


def test_not_applicable_is_shown_as_such_not_as_zero(page: Any, viewer: Fixture) -> None:
    # qa-004: the agent declines ("I'm sorry, I can't advise on that"): nothing to ground
    open_page(page, viewer, f"/runs/{viewer.runs['patient_qa']}/cases/qa-004")
    cf = page.locator("#metric-conversational_faithfulness")
    expect(cf.get_by_text("Not applicable:")).to_be_visible()
    expect(cf).to_contain_text("the answer has no informative sentence")
    expect(cf).to_contain_text("this is not a 0 and is left out of means")
    row = page.locator("#results-table tr[data-metric=conversational_faithfulness]")
    expect(row.locator("td.num")).to_have_text("–")
