"""A blind reviewer of a conversation does not see its turns' gold labels: the gold agent beside
the agents that answered would give agent_selection_accuracy's verdict away."""

from __future__ import annotations

from clineval.model import Case
from clineval.viewer.evidence import render_case_texts
from clineval.viewer.review import _blind_case

CONVERSATION = {
    "id": "tb-1",
    "messages": [
        {"role": "user", "speaker": "user", "text": "Summarise the pathology.", "gold_agent": "Pathology"},
        {"role": "assistant", "speaker": "Radiology", "text": "The CT shows a 2 cm nodule."},
        {"role": "user", "speaker": "user", "text": "Which trials fit?", "gold_tools": ["search_trials"]},
        {"role": "assistant", "speaker": "ClinicalTrials", "text": "Two trials are open."},
    ],
}


def _case(where: str) -> Case:
    metadata = (
        {"conversation": CONVERSATION}
        if where == "dataset"
        else {"agent_output": {"conversation": CONVERSATION, "turns": 2}}
    )
    return Case(id="tb-1", input="Tumor board for patient 7", metadata=metadata)


def test_gold_labels_are_not_in_the_blind_page_of_a_stored_or_simulated_conversation() -> None:
    for where in ("dataset", "simulated"):
        case = _case(where)
        plain = str(render_case_texts(case))
        assert "gold agent: Pathology" in plain and "gold tools: search_trials" in plain
        blind = str(render_case_texts(_blind_case(case)))
        assert "Pathology" not in blind and "search_trials" not in blind
        assert "The CT shows a 2 cm nodule." in blind and "Which trials fit?" in blind
    # the case itself is left as it was (the items and the scores still read the labels)
    assert _case("dataset").metadata["conversation"]["messages"][0]["gold_agent"] == "Pathology"
