"""A small, deterministic tumor board orchestrator to simulate and score conversations offline.

Everything here is synthetic: the patients under ``data/patients/`` and the rule table
:data:`GUIDELINE_RULES` were written for this example; nothing is clinical guidance.

:class:`TumorBoardSystem` is a *system under test* for the conversation simulator: it takes
the :class:`~clineval.conversations.model.Conversation` so far and returns the new messages.
For the last user message (addressed to the orchestrator, "Orchestrator: ..." or plain
text) the **Orchestrator** picks one agent (:func:`route`) and announces it
("PatientHistory, please ..."); the agent calls one tool, whose result is recorded on the
call, and answers from the patient's documents; the Orchestrator then closes the turn with
a short aggregation of that answer. Three agents:

* **PatientHistory** (``load_patient_data``): a chronological timeline of the dated lines
  of every document (an imaging study contributes its dated heading and impression),
  followed by the biomarker list of the ``## Biomarkers`` sections;
* **Radiology** (``get_imaging_reports``): every study of the imaging documents, in date
  order, with its impression, and the most recent one;
* **ClinicalGuidelines** (``lookup_guideline``): the first rule of :data:`GUIDELINE_RULES`
  whose condition, biomarker and (optional) prior therapy are found in the documents.

A request that names no known intent gets a clarifying question from the Orchestrator and
no agent; so does a request without a known patient (``conversation.patient_id``, else a
``tb-00N`` mention in the request or earlier in the conversation).

**Deliberate weakness** (so that the metrics have something to find): PatientHistory keeps
only *dated* lines. The undated ``## Current status`` sections of the clinic notes
(performance status, symptoms, ongoing therapy and its tolerance) are therefore never
reported: the timeline omits the patient's current status, which the reference summaries
under ``data/references/`` end with. TBFact recall against those references, and intent
resolution on "what is the current status?" follow-ups, should show it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clineval.conversations.model import Conversation, Message, ToolCallRecord

ORCHESTRATOR = "Orchestrator"
PATIENT_HISTORY = "PatientHistory"
RADIOLOGY = "Radiology"
CLINICAL_GUIDELINES = "ClinicalGuidelines"
AGENTS = (PATIENT_HISTORY, RADIOLOGY, CLINICAL_GUIDELINES)

DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
LEADING_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2}(?: to \d{4}-\d{2}-\d{2})?)\s*[:\-–—]\s*")
PATIENT_ID = re.compile(r"\btb-\d{3}\b", re.IGNORECASE)
ADDRESS = re.compile(r"^\s*@?orchestrator\s*[:,]?\s*", re.IGNORECASE)

# Intent keywords (regular expressions, matched case-insensitively), checked in this order:
# guidelines first ("what do the guidelines recommend for her treatment?"), then imaging
# ("summarise the imaging response"), then history.
ROUTES: tuple[tuple[str, str], ...] = (
    (
        CLINICAL_GUIDELINES,
        r"next steps?|recommend|guideline|\btrials?\b|options?|should (?:we|he|she|they)|eligib|"
        r"what now|management",
    ),
    (
        RADIOLOGY,
        r"imaging|\bscans?\b|\bmri\b|\bct\b|\bpet\b|radiolog|x-ray|mammogra|ultrasound|lesion|"
        r"recist|rano|respon|progress",
    ),
    (
        PATIENT_HISTORY,
        r"histor|timeline|summar|biomarker|mutation|molecular|patholog|treat|so far|status|"
        r"diagnos|chronolog|overview|background|when did|received|therap|chemo|surgery|resect|"
        r"medication|dose|toxicit|side effect",
    ),
)
ASKS = {
    PATIENT_HISTORY: "please build the chronological patient timeline",
    RADIOLOGY: "please review the imaging reports",
    CLINICAL_GUIDELINES: "please give the guideline-based next steps",
}
"""What the Orchestrator asks each agent when it routes a request."""
CLOSING = re.compile(r"^\W*(?:thanks?|thank you|that'?s all|clear|bye|goodbye)\b", re.IGNORECASE)

# (condition, biomarker name, biomarker value, prior therapy or None, recommendation):
# the first rule whose terms are all found in the patient's documents applies.
GUIDELINE_RULES: tuple[tuple[str, str, str, str | None, str], ...] = (
    (
        "glioblastoma", "IDH1/IDH2", "wildtype", "lomustine",
        "Recurrent glioblastoma, IDH-wildtype, on lomustine: continue lomustine while the disease is "
        "stable, with dose modification for myelotoxicity. A clinical trial is the preferred option "
        "(MGMT promoter unmethylation predicts little benefit from alkylating agents, and EGFR "
        "amplification has no approved targeted therapy); at further progression consider "
        "bevacizumab, re-resection or re-irradiation where feasible, or best supportive care.",
    ),
    (
        "glioblastoma", "IDH1/IDH2", "wildtype", None,
        "Newly diagnosed glioblastoma, IDH-wildtype: maximal safe resection, then radiotherapy "
        "60 Gy in 30 fractions with concurrent and adjuvant temozolomide; consider a clinical trial.",
    ),
    (
        "non-small-cell lung cancer", "KRAS", "G12C", "sotorasib",
        "KRAS G12C non-small-cell lung cancer on a KRAS G12C inhibitor: continue it while there is "
        "clinical benefit, with liver test monitoring. At progression: docetaxel with or without "
        "ramucirumab, or a clinical trial (for example a KRAS G12C inhibitor combination).",
    ),
    (
        "non-small-cell lung cancer", "KRAS", "G12C", None,
        "Advanced KRAS G12C non-small-cell lung cancer: first line, immunotherapy with or without "
        "platinum chemotherapy according to PD-L1; after progression, sotorasib or adagrasib.",
    ),
    (
        "breast cancer", "HER2", "positive", "trastuzumab deruxtecan",
        "Metastatic HER2-positive breast cancer on trastuzumab deruxtecan: continue until "
        "progression or unacceptable toxicity, monitoring for interstitial lung disease and LVEF. "
        "At progression: tucatinib with trastuzumab and capecitabine (preferred with brain "
        "metastases), or a clinical trial.",
    ),
    (
        "breast cancer", "HER2", "positive", None,
        "Early HER2-positive breast cancer: neoadjuvant chemotherapy with trastuzumab and "
        "pertuzumab; adjuvant T-DM1 for residual invasive disease, else complete one year of HER2 "
        "therapy.",
    ),
)  # fmt: skip
THERAPIES = (
    "temozolomide", "lomustine", "bevacizumab", "carboplatin", "pemetrexed", "pembrolizumab",
    "sotorasib", "adagrasib", "docetaxel", "trastuzumab", "pertuzumab", "trastuzumab emtansine",
    "trastuzumab deruxtecan",
)  # fmt: skip


@dataclass
class Document:
    """One source document: its file name, header fields (``Key: value``) and body lines."""

    name: str
    header: dict[str, str]
    lines: list[str] = field(default_factory=list)

    @property
    def is_imaging(self) -> bool:
        return self.header.get("Type", "").lower() == "imaging"

    def sections(self) -> list[tuple[str, list[str]]]:
        """The ``## heading`` sections of the body, with their lines."""
        out: list[tuple[str, list[str]]] = []
        for line in self.lines:
            if line.startswith("## "):
                out.append((line[3:].strip(), []))
            elif out and line.strip():
                out[-1][1].append(line.strip())
        return out


def load_documents(folder: Path) -> list[Document]:
    """The ``*.md`` documents of a patient folder, in file name order."""
    documents = []
    for path in sorted(folder.glob("*.md")):
        header: dict[str, str] = {}
        body: list[str] = []
        for line in path.read_text(encoding="utf-8").splitlines():
            key, sep, value = line.partition(": ")
            if not body and sep and re.fullmatch(r"[A-Z][A-Za-z ]*", key):
                header[key] = value.strip()
            elif line.startswith("## ") or body:
                body.append(line)
        documents.append(Document(path.name, header, body))
    return documents


def route(request: str) -> str | None:
    """The agent a request is for: an agent it names, else the first matching intent, else None."""
    for agent in AGENTS:
        if re.search(rf"\b{agent}\b", request, re.IGNORECASE):
            return agent
    for agent, pattern in ROUTES:
        if re.search(pattern, request, re.IGNORECASE):
            return agent
    return None


def _impression(lines: list[str]) -> str:
    return next((line.split(":", 1)[1].strip() for line in lines if line.startswith("Impression:")), "")


def imaging_studies(documents: list[Document]) -> list[dict[str, str]]:
    """Every dated study (``## YYYY-MM-DD study``) of the imaging documents, in date order."""
    studies = []
    for doc in documents:
        for heading, lines in doc.sections() if doc.is_imaging else []:
            if match := re.match(r"(\d{4}-\d{2}-\d{2})\s+(.+)", heading):
                studies.append(
                    {
                        "date": match[1],
                        "study": match[2],
                        "impression": _impression(lines),
                        "document": doc.name,
                    }
                )
    return sorted(studies, key=lambda s: s["date"])


def timeline(documents: list[Document]) -> list[tuple[str, str]]:
    """(date, event) for every dated line, in date order (ties keep document order).

    Only dated lines are kept: undated sections such as ``## Current status`` are dropped
    (the deliberate weakness, see the module docstring).
    """
    events: list[tuple[str, str]] = []
    for doc in documents:
        if doc.is_imaging:
            events += [(s["date"], f"{s['study']}: {s['impression']}") for s in imaging_studies([doc])]
            continue
        for line in doc.lines:
            text = line.strip().lstrip("-*> ").replace("**", "")
            if line.startswith("#") or not DATE.search(text):
                continue
            match = LEADING_DATE.match(text)
            date = match[1] if match else DATE.findall(text)[0]
            events.append((date, text[match.end() :] if match else text))
    return sorted(dict.fromkeys(events), key=lambda event: event[0][:10])


def current_status(documents: list[Document]) -> str:
    """The ``## Current status`` section of the latest document that has one (undated)."""
    for doc in reversed(documents):
        for heading, lines in doc.sections():
            if heading.strip().lower() == "current status":
                return " ".join(line.strip() for line in lines if line.strip())
    return ""


def biomarkers(documents: list[Document]) -> list[str]:
    """The lines of every ``## Biomarkers`` section."""
    return [
        line.lstrip("-* ")
        for doc in documents
        for heading, lines in doc.sections()
        if heading.lower() == "biomarkers"
        for line in lines
    ]


def match_rule(documents: list[Document]) -> tuple[str, str, str, str | None, str] | None:
    """The first rule of :data:`GUIDELINE_RULES` whose terms are all in the documents."""
    text = "\n".join(line for d in documents for line in d.lines).lower()
    markers = [m.lower() for m in biomarkers(documents)]
    for rule in GUIDELINE_RULES:
        condition, marker, value, prior, _ = rule
        has_marker = any(m.startswith(marker.lower()) and value.lower() in m for m in markers)
        if condition in text and has_marker and (prior is None or prior in text):
            return rule
    return None


Answer = tuple[str, dict[str, Any], Any, str, str]
"""What an agent does: tool name, arguments and result, its answer, the Orchestrator's summary."""


class TumorBoardSystem:
    """The orchestrator and its three agents over the patient folders of ``data_dir``."""

    def __init__(self, data_dir: str | Path | None = None, *, report_current_status: bool = False) -> None:
        self.data_dir = Path(data_dir) if data_dir is not None else Path(__file__).resolve().parent / "data"
        self.patients_dir = self.data_dir / "patients"
        #: Fix the deliberate weakness: PatientHistory also reports the undated current status.
        self.report_current_status = report_current_status

    def __call__(self, conversation: Conversation) -> list[Message]:
        """The Orchestrator's routing, the agent's tool call and answer, and the closing summary."""
        users = [m for m in conversation.messages if m.role == "user"]
        request = ADDRESS.sub("", users[-1].text).strip() if users else ""
        agent = route(request)
        if agent is None:
            if CLOSING.match(request):
                return [_say("You're welcome. I'll keep the case open for the tumor board.")]
            return [
                _say(
                    "I'm not sure which specialist should take this. Would you like the patient's "
                    "history and timeline, a review of the imaging, or guideline-based next steps?"
                )
            ]
        patient_id = self._patient_id(conversation, request)
        if patient_id is None:
            return [_say("Which patient is this about? Please give the patient id (for example tb-001).")]
        if not (self.patients_dir / patient_id).is_dir():
            return [_say(f"I have no records for patient {patient_id}. Could you check the patient id?")]
        documents = load_documents(self.patients_dir / patient_id)
        agents = {PATIENT_HISTORY: _history, RADIOLOGY: _radiology, CLINICAL_GUIDELINES: _guidelines}
        tool, arguments, result, text, summary = agents[agent](patient_id, documents)
        if agent == PATIENT_HISTORY and self.report_current_status and (status := current_status(documents)):
            text += "\n\nCurrent status:\n" + status
        call = ToolCallRecord(id=f"call_{len(users)}_1", name=tool, arguments=arguments, result=result)
        return [
            _say(f"{agent}, {ASKS[agent]} for {patient_id}."),
            Message(role="assistant", speaker=agent, text=text, tool_calls=[call]),
            _say(summary),
        ]

    @staticmethod
    def _patient_id(conversation: Conversation, request: str) -> str | None:
        """A ``tb-00N`` in the request, else the conversation's patient, else an earlier mention."""
        if match := PATIENT_ID.search(request):
            return match[0].lower()
        if conversation.patient_id:
            return conversation.patient_id
        for message in reversed(conversation.messages):
            if message.role == "user" and (match := PATIENT_ID.search(message.text)):
                return match[0].lower()
        return None


def _say(text: str) -> Message:
    return Message(role="assistant", speaker=ORCHESTRATOR, text=text)


def _history(patient_id: str, documents: list[Document]) -> Answer:
    """PatientHistory: the dated timeline and the biomarkers (no current status: the weakness)."""
    read: list[Any] = [{"document": d.name, "type": d.header.get("Type", "")} for d in documents]
    events, markers = timeline(documents), biomarkers(documents)
    name = documents[0].header.get("Patient", patient_id) if documents else patient_id
    if not events:
        return "load_patient_data", {"patient_id": patient_id}, {"documents": read}, "No dated events.", ""
    lines = [f"Patient timeline for {name}, from {len(documents)} documents.", "", "Timeline:"]
    lines += [f"- {date}: {event}" for date, event in events] + ["", "Biomarkers:"]
    lines += [f"- {marker}" for marker in markers]
    summary = (
        f"PatientHistory compiled {len(events)} dated events from {len(documents)} documents "
        f"({events[0][0][:10]} to {events[-1][0][:10]}) and {len(markers)} biomarker results. "
        f"Most recent: {events[-1][0]}: {events[-1][1]}"
    )
    return "load_patient_data", {"patient_id": patient_id}, {"documents": read}, "\n".join(lines), summary


def _radiology(patient_id: str, documents: list[Document]) -> Answer:
    """Radiology: every imaging study with its impression, and the most recent one."""
    studies = imaging_studies(documents)
    result: Any = list(studies)
    if not studies:
        return "get_imaging_reports", {"patient_id": patient_id}, result, "No imaging reports.", ""
    last = studies[-1]
    latest = f"Most recent ({last['date']}, {last['study']}): {last['impression']}"
    lines = [f"Imaging for {patient_id}: {len(studies)} studies.", ""]
    lines += [f"- {s['date']} {s['study']}: {s['impression']}" for s in studies] + ["", latest]
    summary = f"Radiology reviewed {len(studies)} studies. {latest}"
    return "get_imaging_reports", {"patient_id": patient_id}, result, "\n".join(lines), summary


def _guidelines(patient_id: str, documents: list[Document]) -> Answer:
    """ClinicalGuidelines: the matching rule's recommendation and the therapies already given."""
    rule = match_rule(documents)
    if rule is None:
        text = "No rule in my table matches this patient; please discuss at the tumor board."
        return "lookup_guideline", {"condition": None, "biomarker": None}, None, text, text
    condition, marker, value, _, recommendation = rule
    corpus = "\n".join(line for d in documents for line in d.lines).lower()
    given: list[Any] = [t for t in THERAPIES if t in corpus]
    arguments: dict[str, Any] = {"condition": condition, "biomarker": f"{marker} {value}"}
    result: Any = {
        "recommendation": recommendation,
        "prior_therapies": given,
        "source": "example rule table",
    }
    text = (
        f"For {patient_id} ({condition}, {marker} {value}; therapies so far: {', '.join(map(str, given))}):"
        f"\n{recommendation}\n\nFrom an illustrative rule table, for discussion at the tumor board."
    )
    first = recommendation.split(". ", 1)[0].rstrip(".")
    summary = f"ClinicalGuidelines suggests: {first}. Full options above, to be confirmed by the tumor board."
    return "lookup_guideline", arguments, result, text, summary
