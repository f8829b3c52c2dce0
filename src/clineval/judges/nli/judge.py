"""The nli judge: the offline judge, with a local NLI model deciding the fact checks.

Every primitive is the offline judge's (:class:`~clineval.judges.offline.OfflinePrimitives`)
except ``check_facts`` (and so ``check_grounding``, which checks its claims with it). For each
claim, two checks are combined by :func:`combine`:

1. the offline judge's own check. Its conflict checks (another dose, side, drug, organism, a
   negation, a substituted clinical term ...) give a verdict with reason ``incorrect``; such a
   verdict stands whatever the model says, because the model has not been trained to notice
   a changed dose or side in a long clinical text and often calls such a claim entailed;
2. the model's probabilities for the claim (the hypothesis) against premises taken from the
   evidence: the offline check's quoted span first, then windows of consecutive evidence
   sentences as long as the model reads (:func:`evidence_windows`). The premise with the
   highest entailment probability counts.

The verdict, when no offline conflict decided it (thresholds in :class:`NliThresholds`):

* P(entailment) ≥ ``entailed`` (0.5) on some premise: ``entailed``;
* else contradiction is the most probable label on some premise (a three-way model only):
  ``not_entailed``/``incorrect``;
* else ``partial`` when the offline check said ``partial`` or ``entailed`` (its reason, or
  ``missing`` where it said entailed);
* else ``not_entailed``/``missing``.

``support`` is the model's highest entailment probability (0 for a contradicted claim); a
verdict the offline conflict checks decided keeps the offline support. The offline support
(a weighted share of the claim's words) is not mixed in: it is on another scale, and mixing
the two would let a ``partial`` claim outrank an ``entailed`` one. So ``support`` ≥ 0.5 exactly
for the entailed claims. Each explanation says what decided, with both checks.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from clineval.judges.nli.model import EntailmentModel, Probabilities, load_model
from clineval.judges.offline.judge import PrimitivesOnlyJudge
from clineval.judges.offline.primitives import OfflinePrimitives
from clineval.judges.offline.thresholds import DEFAULT_THRESHOLDS, Thresholds
from clineval.judges.primitives import Verdict
from clineval.nlp.embeddings import SentenceEncoder
from clineval.nlp.sentences import split_sentences

__all__ = [
    "NLI_VERSION",
    "NliJudge",
    "NliPrimitives",
    "NliThresholds",
    "Premise",
    "combine",
    "evidence_windows",
]

NLI_VERSION = "nli-verifier/1"
"""The combination rule's version, kept in ``describe()`` with every score."""


@dataclass(frozen=True)
class NliThresholds:
    """The constants the nli judge decides with (listed in ``describe()``)."""

    entailed: float = 0.5
    """P(entailment) on the best premise at or above which a claim is ``entailed``: the model's
    own decision boundary for a two-way or one-logit model, and for a three-way model the point
    where entailment outweighs neutral and contradiction together."""
    min_window_share: float = 0.5
    """A window of evidence is at least this share of the model's length, however long the
    claim (a longer claim is truncated instead)."""

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


DEFAULT_NLI_THRESHOLDS = NliThresholds()


@dataclass(frozen=True)
class Premise:
    """One premise a claim was checked against, and what the model said."""

    text: str
    where: str
    """``the offline span`` or ``window 2 of 3``."""
    probabilities: Probabilities


def evidence_windows(sentences: Sequence[str], lengths: Sequence[int], budget: int) -> list[str]:
    """Windows of consecutive sentences, each as many as fit in ``budget`` tokens (at least one
    sentence; a longer sentence is a window alone and the tokenizer truncates it). Each window
    after the first starts halfway through the one before, so that two neighbouring sentences
    are read together in some window whenever they fit; a window that would end where the one
    before ends is inside it and is left out."""
    windows: list[str] = []
    n = len(sentences)
    start, last_end = 0, -1
    while start < n:
        end, total = start, lengths[start]
        while end + 1 < n and total + lengths[end + 1] <= budget:
            end += 1
            total += lengths[end]
        if end > last_end:
            windows.append(" ".join(sentences[start : end + 1]))
            last_end = end
        if end == n - 1:
            break
        start = max(start + 1, (start + end + 1) // 2)
    return windows


def _offline_said(verdict: Verdict) -> str:
    label = verdict.label if verdict.reason is None else f"{verdict.label}/{verdict.reason}"
    support = f", support {verdict.support:.2f}" if verdict.support is not None else ""
    return (
        f"offline check: {label}{support} ({verdict.explanation})"
        if verdict.explanation
        else (f"offline check: {label}{support}")
    )


def combine(
    offline: Verdict, premises: Sequence[Premise], thresholds: NliThresholds = DEFAULT_NLI_THRESHOLDS
) -> Verdict:
    """The nli judge's verdict for one claim (the rule in the module docstring)."""
    if not premises:
        return offline.model_copy(
            update={"explanation": f"no evidence for the model to read; {_offline_said(offline)}"}
        )
    best = max(premises, key=lambda p: p.probabilities.entailment)  # the first of equals: the offline span
    p_entail = best.probabilities.entailment
    model_said = f"verifier model: {best.probabilities.describe()} on {best.where}"
    if offline.reason == "incorrect":
        return offline.model_copy(
            update={
                "explanation": f"decided by the offline conflict check, which the model does not "
                f"override: {offline.explanation}; {model_said}"
            }
        )
    if p_entail >= thresholds.entailed:
        return Verdict(
            label="entailed",
            evidence=best.text,
            support=p_entail,
            explanation=f"decided by the {model_said} (≥ {thresholds.entailed:g}); {_offline_said(offline)}",
        )
    contradicted = [p for p in premises if p.probabilities.contradicted]
    if contradicted:
        worst = max(contradicted, key=lambda p: p.probabilities.contradiction or 0.0)
        return Verdict(
            label="not_entailed",
            reason="incorrect",
            evidence=worst.text,
            support=0.0,
            explanation=f"decided by the verifier model: contradiction is the most probable label "
            f"({worst.probabilities.describe()}) on {worst.where}; {_offline_said(offline)}",
        )
    below = f"{model_said} (below {thresholds.entailed:g})"
    if offline.label in ("partial", "entailed"):
        return Verdict(
            label="partial",
            reason=offline.reason if offline.label == "partial" else "missing",
            evidence=offline.evidence or best.text,
            support=p_entail,
            explanation=f"partial: the offline check finds the claim's content but the {below}; "
            f"{_offline_said(offline)}",
        )
    return Verdict(
        label="not_entailed",
        reason="missing",
        evidence=offline.evidence,
        support=p_entail,
        explanation=f"decided by the {below}; {_offline_said(offline)}",
    )


class NliPrimitives(OfflinePrimitives):
    """The offline primitives with the fact check combined with a local NLI model
    (see the module docstring)."""

    def __init__(
        self,
        model: EntailmentModel,
        name: str,
        thresholds: Thresholds = DEFAULT_THRESHOLDS,
        encoder: SentenceEncoder | None = None,
        nli_thresholds: NliThresholds = DEFAULT_NLI_THRESHOLDS,
    ):
        super().__init__(thresholds=thresholds, encoder=encoder)
        self.model = model
        self._name = name
        self.nli_thresholds = nli_thresholds

    @property
    def name(self) -> str:
        return self._name

    def describe(self) -> dict[str, Any]:
        """The model and the combination's thresholds; the offline judge's settings under
        ``offline`` (kept apart, so that the run is never taken for an offline judge's)."""
        offline = {**super().describe(), "name": "offline"}
        return {
            "name": self.name,
            "kind": self.kind,
            "nli_version": NLI_VERSION,
            "verifier_model": self.model.describe(),
            "verifier_thresholds": self.nli_thresholds.as_dict(),
            "offline": offline,
        }

    def _windows(self, evidence: str, claims: Sequence[str]) -> list[str]:
        sentences = split_sentences(evidence)
        if not sentences:
            return []
        lengths = self.model.count_tokens(sentences)
        longest_claim = max(self.model.count_tokens(list(claims)), default=0)
        room = self.model.max_length - self.model.pair_overhead()
        budget = max(int(room * self.nli_thresholds.min_window_share), room - longest_claim)
        return evidence_windows(sentences, lengths, budget)

    def check_facts_sync(self, facts_: Sequence[str], evidence: str, **options: Any) -> list[Verdict]:
        """One verdict per fact, in order: the offline check combined with the model's
        (:func:`combine`). ``options`` go to the offline check."""
        offline = super().check_facts_sync(facts_, evidence, **options)
        if not offline:
            return []
        windows = self._windows(evidence or "", facts_)
        where = {text: f"window {i + 1} of {len(windows)}" for i, text in reversed(list(enumerate(windows)))}
        premises_of: list[list[tuple[str, str]]] = []
        for verdict in offline:
            premises = [(verdict.evidence.strip(), "the offline span")] if verdict.evidence.strip() else []
            premises += [(text, where[text]) for text in windows if text != verdict.evidence.strip()]
            premises_of.append(premises if windows else [])
        wanted = {(text, claim) for claim, ps in zip(facts_, premises_of, strict=True) for text, _ in ps}
        pairs = sorted(wanted)
        predicted = dict(zip(pairs, self.model.predict(pairs), strict=True))
        return [
            combine(
                verdict,
                [Premise(text, label, predicted[(text, claim)]) for text, label in premises],
                self.nli_thresholds,
            )
            for claim, verdict, premises in zip(facts_, offline, premises_of, strict=True)
        ]


_models: dict[tuple[str, int, int], EntailmentModel] = {}
_models_lock = threading.Lock()


def shared_model(folder: Path) -> EntailmentModel:
    """The model in ``folder``, loaded once per process (keyed by the folder and its config's
    size and time, so a changed folder is loaded again)."""
    folder = folder.resolve()
    config = folder / "config.json"
    stat = config.stat() if config.is_file() else None
    key = (str(folder), stat.st_size if stat else -1, stat.st_mtime_ns if stat else -1)
    with _models_lock:
        model = _models.get(key)
        if model is None:
            model = _models[key] = load_model(folder)
        return model


class NliJudge(PrimitivesOnlyJudge):
    """The offline judge with a local NLI model checking the facts (``--judge nli:PATH``)."""

    provider = "nli"

    def __init__(self, folder: str | Path, *, model: EntailmentModel | None = None):
        self.folder = Path(folder)
        loaded = model if model is not None else shared_model(self.folder)
        self.primitives = NliPrimitives(loaded, f"nli:{self.folder.resolve().name}")
