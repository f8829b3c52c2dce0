"""A small deterministic prior-authorization (PA) pipeline for the clineval examples.

``decide(policy_text, notes_text)`` reads a synthetic policy excerpt and a synthetic clinical
note (both under ``data/``), checks every policy criterion against the note and returns the
structured decision described in :func:`decide`. It uses the standard library only and no
model: the policy follows a small grammar (one numbered ``**Kind**: text`` line per
criterion) and the note has fixed header labels and section titles. Everything here is
synthetic and for demonstration only; it is not clinical decision support.

Criterion kinds and their grammar (``**Kind** (if <finding>): ...`` makes a criterion apply
only when the note documents that finding):

* ``**Diagnosis**: <name>[, <qualifier>]...``, each part may list ``or`` alternatives
* ``**Age**: <N> years of age or older``
* ``**Prior therapy**: at least <N> of: <item>, <item>, ... — <outcome wording>``, where an
  item is a drug or a class written ``label (member, member, ...)``
* ``**Prescriber**: prescribed by or in consultation with a <specialty>[ or <specialty>]...``
* ``**Finding**: <finding>[ or <finding>]...``
* ``**Combination**: given together with <drug>``
* ``**Not with**: <drug or class>, ...``

Usage: ``python decide.py data/policies/<policy>.md data/notes/<case>.md``
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

HEADERS = ("Patient", "Date of birth", "Sex", "MRN", "Visit date", "Prescriber", "Specialty")
SECTIONS = ("History of present illness", "Medication history", "Relevant findings", "Assessment and plan")
#: Where findings (and diagnosis qualifiers) are looked for.
FINDING_SOURCES = ("Diagnosis", "History of present illness", "Relevant findings")

#: Case-sensitive abbreviations expanded before matching.
ABBREVIATIONS = {"MRD": "minimal residual disease", "Ph": "Philadelphia chromosome", "TB": "tuberculosis"}
ABBREVIATIONS |= {"ALL": "acute lymphoblastic leukemia", "LGS": "Lennox-Gastaut syndrome"}
STOPWORDS = {"a", "an", "the", "of", "and", "or", "to", "in", "on", "at", "by", "for", "with", "from"}


def _cues(text: str) -> tuple[str, ...]:
    return tuple(cue.strip() for cue in text.split("|"))


# Lower-case substring cues that classify a medication-history line or a plan clause.
NOT_GIVEN = _cues(
    "planned|not started|never started|not yet started|never filled|declined|refused|deferred"
    "|not given|not administered|will start"
)
INTOLERANT = _cues("not tolerated|poorly tolerated|intoleran|adverse|toxicity")
INADEQUATE = _cues(
    "no response|no remission|not in remission|inadequate|insufficient|partial response|failed"
    "|failure|refractory|no improvement|persist|progress|relapse|loss of response|lost response"
    "|no benefit|ineffective|not controlled|uncontrolled|flare|breakthrough"
)
CURRENT = _cues("to present|ongoing|current|continuing")
STOPPING = _cues("stop|discontinu|hold|washout")
CONSULT = re.compile(r"(?:in consultation with|co-managed with)\s+([^.;\n]+)", re.I)


def _stem(word: str) -> str:
    """Crude suffix stripping, so that "relapsed"/"relapse" and "severely"/"severe" agree."""
    for _ in range(2):
        for suffix in ("ities", "ity", "ing", "ed", "ly", "es", "s", "e"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
                word = word[: -len(suffix)]
                break
    return word


def _stems(text: str) -> set[str]:
    return {_stem(word) for word in text.split()}


PRE_NEGATION = _stems("no not without denies denied never non absence")
POST_NEGATION = _stems(
    "negative not absent undetectable ruled declined deferred withheld stopped discontinued"
)
POLARITY = _stems("positive negative present absent detected positivity")


def _tokens(text: str) -> list[str]:
    """Lower-case stemmed content words, abbreviations expanded and "X+" read as "X positive"."""
    text = re.sub(r"(?<=\w)\+", " positive", text)
    for short, long in ABBREVIATIONS.items():
        text = re.sub(rf"\b{short}\b", long, text)
    words = re.findall(r"[a-z0-9]+", re.sub(r"['’]", "", text.lower()))
    return [_stem(word) for word in words if word not in STOPWORDS]


def _split(text: str, separators: str = ",;.\n") -> list[str]:
    """Split into clauses at separators outside parentheses (",;." only before a space)."""
    parts: list[str] = []
    current, depth = "", 0
    for i, char in enumerate(text):
        depth = depth + 1 if char in "([" else depth - 1 if char in ")]" and depth else depth
        before_space = i + 1 == len(text) or text[i + 1].isspace()
        if char == "\n" or (depth == 0 and char in separators and before_space):
            parts.append(current)
            current, depth = "", 0
        else:
            current += char
    parts.append(current)
    return [part.strip(" \t-*") for part in parts if part.strip(" \t-*")]


def _mentions(phrase: str, clauses: list[str]) -> list[tuple[str, bool]]:
    """Each clause naming every content word of ``phrase``, and whether it is negated there.

    A cue such as "no" or "without" before the first matched word, or "negative" or "not"
    after the last one, negates the mention; cues elsewhere in the clause do not.
    """
    concept = [w for w in _tokens(phrase) if w not in POLARITY | PRE_NEGATION | POST_NEGATION]
    found = []
    for clause in clauses:
        words = _tokens(clause)
        if concept and all(word in words for word in concept):
            positions = [words.index(word) for word in concept]
            before, after = set(words[: min(positions)]), set(words[max(positions) + 1 :])
            found.append((clause, bool(before & PRE_NEGATION or after & POST_NEGATION)))
    return found


def documented(phrase: str, clauses: list[str]) -> str | None:
    """The first clause documenting ``phrase`` with its polarity ("MRD negative" is not "MRD positive")."""
    wants_negated = bool(set(_tokens(phrase)) & (PRE_NEGATION | POST_NEGATION))
    return next((clause for clause, neg in _mentions(phrase, clauses) if neg == wants_negated), None)


def specialty_satisfies(required: str, specialty: str) -> bool:
    """Whether ``specialty`` names ``required``, qualified or not ("pediatric gastroenterology")."""

    def roots(text: str) -> set[str]:
        out = set()
        for word in re.findall(r"[a-z]+", text.lower()):
            while (short := re.sub(r"(ists?|ians?|ics?|ies|y)$", "", word)) != word and len(short) >= 4:
                word = short
            out.add(word)
        return out

    return roots(required) <= roots(specialty)


def age_at(born: date, on: date) -> int:
    """Age in completed years on a date (a 29 February birthday is reached on 1 March)."""
    return on.year - born.year - ((on.month, on.day) < (born.month, born.day))


def drug_name(entry: str) -> str:
    """The leading drug name of a medication line: the text before its dose, date or outcome."""
    return re.split(r"\d|[,:(]|\s[—–-]\s", entry, maxsplit=1)[0].strip()


def medication_status(entry: str) -> str:
    """Classify a medication line: "not given", "not tolerated", "inadequate response" or neither.

    A planned, declined or never-started drug is "not given", whatever else the line says.
    """
    rest = entry[len(drug_name(entry)) :].lower()
    for status, cues in (
        ("not given", NOT_GIVEN),
        ("not tolerated", INTOLERANT),
        ("inadequate response", INADEQUATE),
    ):
        if any(cue in rest for cue in cues):
            return status
    return "adequate or unclear response"


def _items(text: str) -> list[tuple[str, list[str]]]:
    """Parse ``drug, class (member, member), ...`` into (label, names) pairs."""
    items = []
    for part in _split(text, ","):
        group = re.fullmatch(r"(.+?)\s*\((.+)\)", part)
        label = group.group(1) if group else part
        items.append((label, [label, *(_split(group.group(2), ",") if group else [])]))
    return items


def _names_drug(names: list[str], text: str) -> bool:
    """Whether ``text`` contains one of ``names`` as whole words."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    targets = [re.findall(r"[a-z0-9]+", name.lower()) for name in names]
    return any(words[i : i + len(t)] == t for t in targets for i in range(len(words)))


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


@dataclass(frozen=True)
class Criterion:
    """One policy criterion: its kind, its text and an optional "(if ...)" condition."""

    kind: str
    text: str
    condition: str | None = None


@dataclass
class Notes:
    """The parts of a clinical note that the criteria are checked against."""

    headers: dict[str, str]
    diagnosis: str
    icd10: str
    medication: str
    dosage: str
    sections: dict[str, list[str]] = field(default_factory=dict)

    def clauses(self, *names: str) -> list[str]:
        """The clauses of the named sections ("Diagnosis" is the diagnosis line)."""
        lines = [self.diagnosis] if "Diagnosis" in names else []
        lines += [line for name in names for line in self.sections.get(name, [])]
        return [clause for line in lines for clause in _split(line)]


def parse_policy(text: str) -> tuple[str, str, list[Criterion]]:
    """Return (policy id, title, criteria) of a policy written in the example grammar."""
    title = re.search(r"^#\s+(\S+):\s*(.+?)\s*$", text, re.M)
    if not title:
        raise ValueError("policy has no title line '# <Policy id>: <drug> for <indication>'")
    criteria = []
    line = r"^\s*\d+\.\s+\*\*(.+?)\*\*(?:\s*\(if\s+(.+?)\))?:\s*(.+?)\s*$"
    for kind, condition, body in re.findall(line, text, re.M):
        if kind not in ASSESSORS:
            raise ValueError(f"unknown criterion kind {kind!r} in policy {title.group(1)}")
        criteria.append(Criterion(kind, body, condition or None))
    if not criteria:
        raise ValueError(f"policy {title.group(1)} lists no '**Kind**: ...' criteria")
    return title.group(1), title.group(2), criteria


def parse_notes(text: str) -> Notes:
    """Read the header block, the ``Diagnosis:`` line, the sections and the ``Requested:`` line."""
    headers = {}
    for label in HEADERS:
        found = re.search(rf"^{label}:[ \t]*(\S.*?)\s*$", text, re.M)
        if not found:
            raise ValueError(f"clinical note is missing the required header '{label}:'")
        headers[label] = found.group(1)
    diagnosis = re.search(r"^Diagnosis:\s*(.+?)\s*\(([A-Z]\d{2}(?:\.[0-9A-Z]{1,4})?)\)\s*$", text, re.M)
    if not diagnosis:
        raise ValueError("clinical note is missing the line 'Diagnosis: <text> (<ICD-10 code>)'")
    requested = re.search(r"^[-* ]*Requested:\s*(.+?)\s*$", text, re.M)
    if not requested:
        raise ValueError("clinical note is missing the line 'Requested: <drug> <dose>'")
    medication, *dose = re.split(r"\s+(?=\d)", requested.group(1), maxsplit=1)
    sections: dict[str, list[str]] = {}
    titles = {title.lower(): title for title in SECTIONS}
    current = None
    for raw in text.splitlines():
        if (title := raw.strip().rstrip(":").lower()) in titles:
            current = titles[title]
            sections[current] = []
        elif current and raw.strip():
            sections[current].append(raw.strip().lstrip("-* ").strip())
    return Notes(headers, diagnosis.group(1), diagnosis.group(2), medication, "".join(dose), sections)


#: An assessment: (met, evidence quoted from the note, a fact for the rationale).
Assessment = tuple[bool, str, str]


def _assess_diagnosis(c: Criterion, notes: Notes, age: int) -> Assessment:
    """The first part must be in the diagnosis line; qualifiers may also be in the findings."""
    hits: list[str] = []
    missing: list[str] = []
    for i, part in enumerate(_split(c.text, ",")):
        clauses = notes.clauses(*(("Diagnosis",) if i == 0 else FINDING_SOURCES))
        clause = next(filter(None, (documented(alt, clauses) for alt in part.split(" or "))), None)
        (hits if clause else missing).append(clause or part)
    if missing:
        evidence = "; ".join(hits) or "not found in the diagnosis line"
        return False, evidence, f"the diagnosis ({notes.diagnosis}) does not establish {_join(missing)}"
    return True, "; ".join(dict.fromkeys(hits)), f"the diagnosis ({notes.diagnosis}) matches the policy"


def _assess_finding(c: Criterion, notes: Notes, age: int) -> Assessment:
    """Any one of the ``or`` alternatives must be documented with the right polarity."""
    clauses = notes.clauses(*FINDING_SOURCES)
    for alternative in c.text.split(" or "):
        if clause := documented(alternative, clauses):
            return True, clause, f"{alternative} is documented"
    return False, "not found in the note", f"{c.text} is not documented"


def _assess_age(c: Criterion, notes: Notes, age: int) -> Assessment:
    minimum = re.fullmatch(r"(\d+) years? of age or older", c.text)
    if not minimum:
        raise ValueError(f"cannot read Age criterion {c.text!r}")
    h = notes.headers
    evidence = f"Date of birth: {h['Date of birth']}; Visit date: {h['Visit date']} (age {age})"
    if age >= int(minimum.group(1)):
        return True, evidence, f"the patient is {age} years old"
    return (
        False,
        evidence,
        f"the patient is {age} years old, below the minimum age of {minimum.group(1)} years",
    )


def _assess_prescriber(c: Criterion, notes: Notes, age: int) -> Assessment:
    """The Specialty header, or a specialist named after "in consultation with", must match."""
    wanted = re.fullmatch(r"prescribed by or in consultation with an? (.+)", c.text)
    if not wanted:
        raise ValueError(f"cannot read Prescriber criterion {c.text!r}")
    specialties, specialty = wanted.group(1).split(" or "), notes.headers["Specialty"]
    if any(specialty_satisfies(s, specialty) for s in specialties):
        return True, f"Specialty: {specialty}", f"the prescriber's specialty is {specialty.lower()}"
    body = "\n".join(line for lines in notes.sections.values() for line in lines)
    for consultant in CONSULT.findall(body):
        if any(specialty_satisfies(s, consultant) for s in specialties):
            return True, consultant, f"the request was made in consultation with {consultant}"
    fact = (
        f"the prescriber's specialty is {specialty.lower()} and no {' or '.join(specialties)} is documented"
    )
    return False, f"Specialty: {specialty}", fact + " as prescriber or consultant"


def _assess_prior_therapy(c: Criterion, notes: Notes, age: int) -> Assessment:
    """At least N listed items given without adequate response or not tolerated (a class counts once)."""
    rule = re.fullmatch(r"at least (\d+) of:\s*(.+?)\s+[—–-]+\s+.+", c.text)
    if not rule:
        raise ValueError(f"cannot read Prior therapy criterion {c.text!r}")
    needed, items = int(rule.group(1)), _items(rule.group(2))
    meds = notes.sections.get("Medication history", [])
    counted, facts, not_given, evidence = [], [], [], []
    for label, names in items:
        entries = [entry for entry in meds if _names_drug(names, drug_name(entry))]
        evidence += entries
        failed = [e for e in entries if medication_status(e) in ("not tolerated", "inadequate response")]
        counted += [label] if failed else []
        for entry in failed:
            status = medication_status(entry)
            how = "not tolerated" if status == "not tolerated" else "tried without adequate response"
            facts.append(f"{drug_name(entry).lower()} was {how}")
        not_given += [drug_name(e).lower() for e in entries if medication_status(e) == "not given"]
    quoted = "; ".join(evidence) or "no listed therapy in the medication history"
    if len(counted) >= needed:
        return True, quoted, _join(facts)
    if counted:
        fact = f"only {len(counted)} of the required {needed} prior therapies ({_join(counted)}) was"
    else:
        labels = ", ".join(label for label, _ in items)
        fact = f"none of the required prior therapies (at least {needed} of: {labels}) was"
    fact += " tried without adequate response or not tolerated"
    if not_given:
        fact += (
            f", and {_join(not_given)} {'was' if len(not_given) == 1 else 'were'} documented but not given"
        )
    return False, quoted, fact


def _assess_combination(c: Criterion, notes: Notes, age: int) -> Assessment:
    """The partner drug must be named, not negated, in the assessment and plan."""
    partner = re.sub(r"^given together with\s+", "", c.text)
    plan = notes.clauses("Assessment and plan")
    found = [clause for alt in partner.split(" or ") for clause, neg in _mentions(alt, plan) if not neg]
    if found:
        return True, "; ".join(found), f"{partner} is planned together with {notes.medication}"
    return False, "not in the plan", f"the plan does not include {partner}"


def _assess_not_with(c: Criterion, notes: Notes, age: int) -> Assessment:
    """No listed drug may be current (and not being stopped) or added in the plan."""
    plan = notes.clauses("Assessment and plan")
    clashes = []
    for _, names in _items(c.text):
        mentions = [found for name in names for found in _mentions(name, plan)]
        stopping = [clause for clause, _ in mentions if any(cue in clause.lower() for cue in STOPPING)]
        clashes += [clause for clause, neg in mentions if not neg and clause not in stopping]
        for entry in notes.sections.get("Medication history", []):
            current = any(cue in entry.lower() for cue in CURRENT)
            if _names_drug(names, drug_name(entry)) and current and medication_status(entry) != "not given":
                clashes += [] if stopping else [entry]
    if clashes:
        clashes = list(dict.fromkeys(clashes))
        return False, "; ".join(clashes), f"{_join(clashes)} would be given concurrently"
    return True, "none of these is current or planned", ""


ASSESSORS: dict[str, Callable[[Criterion, Notes, int], Assessment]] = {
    "Diagnosis": _assess_diagnosis,
    "Age": _assess_age,
    "Prior therapy": _assess_prior_therapy,
    "Prescriber": _assess_prescriber,
    "Finding": _assess_finding,
    "Combination": _assess_combination,
    "Not with": _assess_not_with,
}


def decide(policy_text: str, notes_text: str) -> dict[str, Any]:
    """Decide a PA request: parse both texts, assess every criterion, approve only if all are met.

    Returns ``patient_information``, ``physician_information``, ``clinical_information``,
    ``policy``, ``criteria`` (kind, requirement, "met"/"not met", evidence), ``decision``
    ("approved"/"denied") and a ``rationale`` of 1-2 sentences built from facts in the note
    and the policy only. A conditional criterion whose condition is not documented is
    reported as met ("Not applicable"). Raises ValueError when the policy title, a criterion's
    grammar, a required note header, the diagnosis line or the ``Requested:`` line is missing.
    """
    policy_id, title, criteria = parse_policy(policy_text)
    notes = parse_notes(notes_text)
    h = notes.headers
    try:
        age = age_at(date.fromisoformat(h["Date of birth"]), date.fromisoformat(h["Visit date"]))
    except ValueError as exc:
        raise ValueError(f"Date of birth and Visit date must be YYYY-MM-DD: {exc}") from exc
    results: list[dict[str, str]] = []
    met_facts: list[str] = []
    unmet_facts: list[str] = []
    met_kinds: list[str] = []
    for c in criteria:
        if c.condition and not documented(c.condition, notes.clauses(*FINDING_SOURCES)):
            met, evidence, fact = True, f"Not applicable: {c.condition} is not documented", ""
        else:
            met, evidence, fact = ASSESSORS[c.kind](c, notes, age)
            fact = f"{c.condition} is documented, so {fact}" if c.condition and not met else fact
        requirement = f"(if {c.condition}) {c.text}" if c.condition else c.text
        assessment = "met" if met else "not met"
        results.append(
            {"criterion": c.kind, "requirement": requirement, "assessment": assessment, "evidence": evidence}
        )
        (met_facts if met else unmet_facts).append(fact)
        repeated = [other.kind for other in criteria].count(c.kind) > 1
        met_kinds += [f"{c.kind} ({c.text})" if repeated else c.kind] if met else []
    if unmet_facts:
        rationale = f"Denied under {policy_id}: {'; '.join(unmet_facts)}."
        if met_kinds:
            rationale += f" The other criteria ({', '.join(met_kinds)}) were met."
    else:
        rationale = f"Approved under {policy_id}: {'; '.join(f for f in met_facts if f)}."
    return {
        "patient_information": {
            "patient_name": h["Patient"],
            "date_of_birth": h["Date of birth"],
            "age": age,
            "sex": h["Sex"],
            "mrn": h["MRN"],
        },
        "physician_information": {"physician_name": h["Prescriber"], "specialty": h["Specialty"]},
        "clinical_information": {
            "diagnosis": notes.diagnosis,
            "icd10_code": notes.icd10,
            "treatment_request": {"medication": notes.medication, "dosage": notes.dosage},
            "prior_treatments": notes.sections.get("Medication history", []),
            "findings": notes.sections.get("Relevant findings", []),
        },
        "policy": {"policy_id": policy_id, "title": title},
        "criteria": results,
        "decision": "denied" if unmet_facts else "approved",
        "rationale": rationale,
    }


if __name__ == "__main__":
    import json
    import sys
    from pathlib import Path

    policy, notes = (Path(arg).read_text(encoding="utf-8") for arg in sys.argv[1:3])
    print(json.dumps(decide(policy, notes), indent=2, ensure_ascii=False))
