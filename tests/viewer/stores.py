"""Small real run stores for the viewer's tests, made through the public API."""

from __future__ import annotations

from pathlib import Path

import clineval

XSS_SCRIPT = "<script>alert(1)</script>"
XSS_IMG = '"><img src=x onerror=alert(1)>'
#: Shaped like an OpenAI key: the store's masking must keep it off every page.
SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


def _cases() -> list[dict[str, object]]:
    return [
        {"id": "c1", "input": XSS_SCRIPT, "reference": "Potassium 5.9 mmol/L.", "metadata": {"task": "labs"}},
        {"id": "c2", "input": XSS_IMG, "reference": "Sodium 140 mmol/L.", "metadata": {"task": "labs"}},
        {"id": "c3", "input": f"What dose? key {SECRET}", "metadata": {"task": "meds"}},  # no reference
    ]


def _first(query: str) -> dict[str, object]:
    return {"response": "Potassium 5.9 mmol/L." if "script" in query else "I do not know <b>bold</b>"}


def _second(query: str) -> dict[str, object]:
    if "script" in query:
        return {"response": "Potassium 5.9 mmol/L."}
    if "img" in query:
        return {"response": "Sodium 140 mmol/L."}
    return {"response": "Metformin 500 mg."}


def _numbered(query: str) -> dict[str, object]:
    n = int(query.split()[-1])
    # exact_match for every third case, token_f1 rises with n
    words = " ".join(f"w{i}" for i in range(n % 5 + 1))
    return {"response": f"answer {n}" if n % 3 == 0 else words}


def build_store(path: Path) -> dict[str, str]:
    """Four runs: 'first' and 'second' (3 cases, one without a reference: unscored token_f1),
    'many' (25 cases, for pagination) and 'tbfact' (one case, the offline judge)."""
    ids: dict[str, str] = {}
    metrics = ["exact_match", "token_f1"]
    ids["first"] = clineval.evaluate(
        _cases(), metrics, agent=_first, store=path, name="first", tags={"team": "a"}
    ).run_id
    ids["second"] = clineval.evaluate(
        _cases(), metrics, agent=_second, store=path, name="second", tags={"team": "b"}
    ).run_id
    many = [
        {
            "id": f"m{n:02d}",
            "input": f"question {n}",
            "reference": f"answer {n}",
            "metadata": {"band": str(n % 2)},
        }
        for n in range(25)
    ]
    ids["many"] = clineval.evaluate(many, metrics, agent=_numbered, store=path, name="many").run_id
    tb = [
        {
            "id": "t1",
            "input": "Summarise the tumour board note.",
            "response": "Stage IIIA adenocarcinoma; EGFR exon 19 deletion. Start osimertinib 80 mg daily.",
            "reference": "Stage IIIA lung adenocarcinoma with an EGFR exon 19 deletion. "
            "Plan: osimertinib 80 mg once daily.",
        }
    ]
    ids["tbfact"] = clineval.evaluate(tb, ["tbfact"], store=path, name="tbfact").run_id
    return ids
