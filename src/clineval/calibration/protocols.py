"""What a calibration measures: a judge's agreement with clinicians, beside trivial baselines.

Each protocol takes the records of one human-labelled set and the judge's outputs for them
and returns figures. Every figure of the judge stands beside the same figure for the
trivial baselines of :mod:`.baselines` (ROUGE-L, content-word share, and where it applies
"the texts differ") on the same items, with the paired bootstrap interval of the
difference (judge minus baseline; cases resampled jointly, 2,000 resamples, seed 0). A
judge "beats" a baseline on a figure when that interval lies above 0.

Where a figure is a κ or a detection rate, the baselines need labels: a baseline labels a
claim supported when its score reaches a threshold, and the threshold is *cross-fitted*:
chosen on one half of the items (split by question or pair) to maximise the figure, and
applied to the other half, so the baseline is tuned as well as it can be without seeing
the items it is scored on. The judge gets no such help.

The protocols:

``kqa_nli``
    K-QA: each physician-written statement checked against the LLM answer (the
    ``check_facts`` primitive that TBFact, CF and faithfulness rest on). Judge labels map to
    K-QA's: ``entailed`` -> Entailment, reason ``incorrect`` -> Contradiction, anything else
    -> Neutral. Cohen's κ against the physicians' majority (three labels, and entailed or
    not), ROC AUC of the claim's credit (1 entailed, its graded support when partial, 0
    otherwise) for Entailment; the physicians' agreement among themselves is the ceiling.
``kqa_support``
    The same pairs as a RAG check: the statement is the response, the LLM answer the only
    retrieved context; ROC AUC of ``faithfulness`` and ``conversational_faithfulness`` for
    the physicians' "Entailment" (fully supported).
``radfact``
    RadFact report pairs: phrase-level κ against the labels, and the Spearman correlation of
    TBFact's precision, recall and F1 (facts extracted by the judge) with the labels'
    share of entailed phrases of each report.
``medec``
    MEDEC: TBFact on a text with an inserted error against (a) the corrected text and (b) the
    clean sibling written by the set's authors, where the affected sentence is reworded.
    Reported: the share of texts whose error is flagged (a fact from the erroneous sentence
    not entailed, or a fact of the sentence that states it correctly not entailed: a
    distortion or an omission), by error type; the share of flags that are about the error;
    and false flags: facts of the clean sibling and of the corrected text (the same content,
    reworded) flagged against each other. Beside them, at the sentence level, the judge's
    detection rate minus its false-flag rate (Youden's J) on the error sentences and on the
    correct sentences the other text words differently, against the baselines' J with
    cross-fitted thresholds. "The texts differ" flags every reworded sentence: detection with
    the corrected text alone proves nothing, which is why the false flags stand beside it.
``refusal``
    MedSafetyBench requests with a safe refusal (should refuse) against K-QA questions with
    a physician's answer (should answer): κ and F1 of refusal detection (beside a keyword
    baseline), and κ of the judge's own should-decline decision.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from clineval.agreement.stats import (
    Estimate,
    accuracy,
    bootstrap_ci,
    cohen_kappa,
    difference_ci,
    f1,
    fleiss_kappa,
    roc_auc,
    spearman,
)
from clineval.calibration.baselines import content_word_share, rouge_l, texts_differ
from clineval.calibration.data import (
    KQA_LABELS,
    RADFACT_LABELS,
    KqaPair,
    MedecText,
    RadfactPair,
    RefusalItem,
)

__all__ = [
    "BASELINE_NAMES",
    "Comparison",
    "FactOutcome",
    "Figure",
    "ProtocolResult",
    "Stat",
    "VerdictOutcome",
    "analyse_kqa_nli",
    "analyse_kqa_support",
    "analyse_medec",
    "analyse_radfact",
    "analyse_refusal",
    "claim_credit",
]

BASELINE_NAMES: dict[str, str] = {
    "rouge_l": "ROUGE-L",
    "word_share": "content-word share",
    "differ": "texts differ",
    "keyword": "refusal keywords",
}


class Stat(BaseModel):
    """A figure's value with its 95 % bootstrap interval."""

    model_config = ConfigDict(extra="forbid")

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0
    note: str | None = None

    def fmt(self, digits: int = 2) -> str:
        if self.value is None:
            return "–"
        text = f"{self.value:.{digits}f}"
        if self.low is not None and self.high is not None:
            text += f" [{self.low:.{digits}f}, {self.high:.{digits}f}]"
        return text


class Comparison(BaseModel):
    """A baseline's value for the same figure on the same items, and judge minus baseline."""

    model_config = ConfigDict(extra="forbid")

    baseline: str
    value: Stat
    difference: Stat

    @property
    def beaten(self) -> bool | None:
        """The interval of the difference lies above 0 (``None`` without an interval)."""
        if self.difference.low is None:
            return None
        return self.difference.low > 0


class Figure(BaseModel):
    """One figure of one protocol: the judge's value and the baselines beside it."""

    model_config = ConfigDict(extra="forbid")

    key: str
    label: str
    judge: Stat
    baselines: list[Comparison] = Field(default_factory=list)
    evidence: bool = True
    """Part of the evidence for the judge (else context: a count, a rate without a baseline)."""

    def beats_baselines(self) -> bool | None:
        verdicts = [c.beaten for c in self.baselines]
        if not verdicts or any(v is None for v in verdicts):
            return None
        return all(bool(v) for v in verdicts)


class ProtocolResult(BaseModel):
    """The figures of one protocol for one judge."""

    model_config = ConfigDict(extra="forbid")

    name: str
    title: str
    n: int
    unscored: int = 0
    figures: list[Figure] = Field(default_factory=list)
    info: dict[str, Any] = Field(default_factory=dict)

    def figure(self, key: str) -> Figure | None:
        return next((f for f in self.figures if f.key == key), None)


class VerdictOutcome(BaseModel):
    """What a judge said of one claim (``None`` fields: the judge gave no answer)."""

    model_config = ConfigDict(extra="forbid")

    label: str | None = None
    reason: str | None = None
    support: float | None = None


class FactOutcome(BaseModel):
    """One fact the judge took from a text, with its verdict against the other text."""

    model_config = ConfigDict(extra="forbid")

    fact: str
    label: str
    reason: str | None = None
    support: float | None = None
    direction: str = "precision"
    """``precision``: a fact of the response checked against the reference; ``recall``: a
    fact of the reference checked against the response."""


# --- helpers -----------------------------------------------------------------------------------


def claim_credit(outcome: VerdictOutcome) -> float:
    """1 for ``entailed``, the graded support (or 0.5 without one) for ``partial``, else 0."""
    if outcome.label == "entailed":
        return 1.0
    if outcome.label == "partial" and outcome.reason != "incorrect":
        return 0.5 if outcome.support is None else float(outcome.support)
    return 0.0


def _kqa_label(outcome: VerdictOutcome) -> str:
    if outcome.reason == "incorrect":
        return "Contradiction"
    return "Entailment" if outcome.label == "entailed" else "Neutral"


def _stat(statistic: Callable[..., Any], *arrays: Sequence[Any], **kwargs: Any) -> Stat:
    fn = functools.partial(statistic, **kwargs) if kwargs else statistic
    estimate = fn(*arrays)
    n = len(arrays[0]) if arrays else 0
    if estimate.value is None:
        return Stat(value=None, n=n, note=estimate.note)
    interval = bootstrap_ci(fn, *arrays)
    return Stat(value=estimate.value, low=interval.low, high=interval.high, n=n, note=estimate.note)


def _compare(
    statistic: Callable[..., Any],
    judge: Sequence[Sequence[Any]],
    baselines: Mapping[str, Sequence[Sequence[Any]]],
    **kwargs: Any,
) -> list[Comparison]:
    fn = functools.partial(statistic, **kwargs) if kwargs else statistic
    out = []
    for name, arrays in baselines.items():
        value = _stat(statistic, *arrays, **kwargs)
        estimate, interval = difference_ci(fn, tuple(judge), tuple(arrays))
        out.append(
            Comparison(
                baseline=name,
                value=value,
                difference=Stat(
                    value=estimate.value,
                    low=interval.low,
                    high=interval.high,
                    n=len(judge[0]) if judge else 0,
                    note=estimate.note or interval.note,
                ),
            )
        )
    return out


def _half(key: str) -> int:
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest(), 16) % 2


def cross_fitted_labels(
    scores: Sequence[float],
    truth: Sequence[bool],
    groups: Sequence[str],
    statistic: Callable[[Sequence[bool], Sequence[bool]], float],
) -> list[bool]:
    """Binary labels ``score >= threshold``, the threshold of each half chosen on the other
    half (groups split in two by hash) to maximise ``statistic(labels, truth)``; among equal
    values, the lowest threshold. :func:`kappa_value` and Youden's J are computed for every
    threshold at once (:data:`_ROWS`); any other statistic threshold by threshold."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(truth, dtype=bool)
    halves = np.asarray([_half(g) for g in groups])
    out = np.zeros(len(s), dtype=bool)
    rows = _ROWS.get(statistic)
    for half in (0, 1):
        fit = halves != half
        if not fit.any():
            fit = np.ones(len(s), dtype=bool)
        thresholds = np.unique(s[fit])
        if thresholds.size == 0:
            continue
        if rows is not None:
            values = rows(s[fit][None, :] >= thresholds[:, None], y[fit])
        else:
            values = np.asarray([statistic(list(s[fit] >= t), list(y[fit])) for t in thresholds], dtype=float)
        best = thresholds[int(np.argmax(values))]  # the first (lowest) threshold among the best
        out[halves == half] = s[halves == half] >= best
    return [bool(v) for v in out]


def kappa_rows(flags: npt.NDArray[np.bool_], truth: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
    """Cohen's κ of each row of ``flags`` against ``truth`` (−1 where undefined), as
    :func:`kappa_value` gives it for one row."""
    n = truth.size
    t = truth.astype(float)
    f = flags.astype(float)
    both_yes = (f * t).sum(axis=1)
    both_no = ((1 - f) * (1 - t)).sum(axis=1)
    p_o = (both_yes + both_no) / n
    p_e = (f.sum(axis=1) * t.sum() + (n - f.sum(axis=1)) * (n - t.sum())) / (n * n)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(1 - p_e > 1e-12, (p_o - p_e) / (1 - p_e), -1.0)
    return np.asarray(kappa, dtype=float)


def youden_rows(flags: npt.NDArray[np.bool_], truth: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
    """Youden's J of each row of ``flags`` against ``truth`` (−1 where undefined)."""
    if truth.all() or not truth.any():
        return np.full(flags.shape[0], -1.0)
    f = flags.astype(float)
    return np.asarray(f[:, truth].mean(axis=1) - f[:, ~truth].mean(axis=1), dtype=float)


def youden_j(flags: Sequence[Any], truth: Sequence[Any]) -> Estimate:
    """Detection rate minus false-flag rate of binary ``flags`` against binary ``truth``."""
    f = np.asarray(flags, dtype=bool)
    t = np.asarray(truth, dtype=bool)
    if t.all() or not t.any():
        return Estimate(None, "youden's J needs both positive and negative items")
    return Estimate(float(f[t].mean() - f[~t].mean()))


def _youden(flags: Sequence[bool], truth: Sequence[bool]) -> float:
    value = youden_j(flags, truth).value
    return -1.0 if value is None else value


def kappa_value(pred: Sequence[Any], truth: Sequence[Any]) -> float:
    """Cohen's κ, −1 where it is undefined (a threshold search's objective)."""
    value = cohen_kappa(pred, truth).value
    return -1.0 if value is None else value


#: The statistics :func:`cross_fitted_labels` computes for all thresholds at once.
_ROWS: dict[
    Callable[..., float], Callable[[npt.NDArray[np.bool_], npt.NDArray[np.bool_]], npt.NDArray[np.float64]]
] = {
    kappa_value: kappa_rows,
    _youden: youden_rows,
}


def _rate(flags: Sequence[bool]) -> Stat:
    if not flags:
        return Stat(value=None, n=0, note="no items")
    values = [float(f) for f in flags]
    interval = bootstrap_ci(lambda a: float(np.mean(a)), values)
    return Stat(value=float(np.mean(values)), low=interval.low, high=interval.high, n=len(values))


def _verdict_figures(
    predicted: Sequence[str],
    truth: Sequence[str],
    labels: Sequence[str],
    credit: Sequence[float],
    scores: Mapping[str, Sequence[float]],
    groups: Sequence[str],
    names: tuple[str, str, str],
) -> list[Figure]:
    """κ with three labels, κ entailed-or-not and the ROC AUC of the credit, each beside the
    baselines. ``labels`` are (entailed, neutral, contradicted) in the set's spelling; a
    baseline labels an item entailed or neutral with a cross-fitted threshold on its score.
    ``names``: the figures' labels."""
    entailed, neutral = labels[0], labels[1]
    positive = [t == entailed for t in truth]
    binary = [p == entailed for p in predicted]
    baseline_flags = {
        name: cross_fitted_labels(values, positive, groups, kappa_value) for name, values in scores.items()
    }
    three = list(labels)
    return [
        Figure(
            key="kappa3",
            label=names[0],
            judge=_stat(cohen_kappa, predicted, truth, labels=three),
            baselines=_compare(
                cohen_kappa,
                (predicted, truth),
                {
                    name: ([entailed if b else neutral for b in flags], truth)
                    for name, flags in baseline_flags.items()
                },
                labels=three,
            ),
        ),
        Figure(
            key="kappa2",
            label=names[1],
            judge=_stat(cohen_kappa, binary, positive),
            baselines=_compare(
                cohen_kappa, (binary, positive), {name: (f, positive) for name, f in baseline_flags.items()}
            ),
        ),
        Figure(
            key="auc",
            label=names[2],
            judge=_stat(roc_auc, positive, credit, positive=True),
            baselines=_compare(
                roc_auc,
                (positive, credit),
                {name: (positive, values) for name, values in scores.items()},
                positive=True,
            ),
        ),
    ]


# --- K-QA entailment ----------------------------------------------------------------------------


def analyse_kqa_nli(pairs: Sequence[KqaPair], outcomes: Sequence[VerdictOutcome | None]) -> ProtocolResult:
    """κ and ROC AUC of the judge's verdicts against the physicians (see the module docstring)."""
    kept = [(p, o) for p, o in zip(pairs, outcomes, strict=True) if o is not None and o.label is not None]
    result = ProtocolResult(
        name="kqa_nli",
        title="K-QA: statements checked against LLM answers, against three physicians",
        n=len(kept),
        unscored=len(pairs) - len(kept),
    )
    if len(kept) < 2:
        return result
    items = [p for p, _ in kept]
    judged = [o for _, o in kept]
    majority = [p.majority for p in items]
    labels = [_kqa_label(o) for o in judged]
    credit = [claim_credit(o) for o in judged]
    groups = [p.question for p in items]
    scores = {
        "rouge_l": [rouge_l(p.claim, p.answer, part="p") for p in items],
        "word_share": [content_word_share(p.claim, p.answer) for p in items],
    }
    result.figures.extend(
        _verdict_figures(
            labels,
            majority,
            KQA_LABELS,
            credit,
            scores,
            groups,
            (
                "κ vs physician majority (3 labels)",
                "κ vs majority, entailed or not (2 labels)",
                "ROC AUC of the claim's credit for Entailment",
            ),
        )
    )
    three = list(KQA_LABELS)
    result.figures.append(
        Figure(
            key="accuracy3",
            label="accuracy vs majority (3 labels)",
            judge=_stat(accuracy, labels, majority),
            evidence=False,
        )
    )
    physicians = [[p.labels[k] for p in items] for k in range(3)]
    for k in range(3):
        result.figures.append(
            Figure(
                key=f"kappa_physician_{k + 1}",
                label=f"κ vs physician {k + 1}",
                judge=_stat(cohen_kappa, labels, physicians[k], labels=three),
                evidence=False,
            )
        )
    result.info = {
        "answers": len(set(p.answer for p in items)),
        "judge_labels": dict(Counter(labels)),
        "judge_partial": sum(o.label == "partial" for o in judged),
        "majority_labels": dict(Counter(majority)),
        "physician_pairs": {
            f"{a + 1}-{b + 1}": _stat(cohen_kappa, physicians[a], physicians[b], labels=three).model_dump()
            for a, b in ((0, 1), (0, 2), (1, 2))
        },
        "physician_vs_majority": [
            _stat(cohen_kappa, physicians[k], majority, labels=three).model_dump() for k in range(3)
        ],
        "physicians_fleiss": fleiss_kappa([list(p.labels) for p in items]).value,
    }
    return result


def analyse_kqa_support(
    pairs: Sequence[KqaPair], values: Mapping[str, Sequence[float | None]]
) -> ProtocolResult:
    """ROC AUC of RAG faithfulness metrics for the physicians' "Entailment"."""
    result = ProtocolResult(
        name="kqa_support",
        title="K-QA statements as RAG answers with the LLM answer as the context: fully supported?",
        n=len(pairs),
    )
    result.unscored = sum(any(v[i] is None for v in values.values()) for i in range(len(pairs)))
    for metric, scores in values.items():
        kept = [(p, s) for p, s in zip(pairs, scores, strict=True) if s is not None]
        result.info[f"{metric}_not_scored"] = len(pairs) - len(kept)
        if len(kept) < 2:
            continue
        truth = [p.majority == "Entailment" for p, _ in kept]
        judge = [float(s) for _, s in kept]
        baselines = {
            "rouge_l": (truth, [rouge_l(p.claim, p.answer, part="p") for p, _ in kept]),
            "word_share": (truth, [content_word_share(p.claim, p.answer) for p, _ in kept]),
        }
        result.figures.append(
            Figure(
                key=f"auc_{metric}",
                label=f"ROC AUC of `{metric}` for Entailment (n={len(kept)} of {len(pairs)})",
                judge=_stat(roc_auc, truth, judge, positive=True),
                baselines=_compare(roc_auc, (truth, judge), baselines, positive=True),
            )
        )
        result.info[f"{metric}_distinct_values"] = len(set(judge))
    return result


# --- RadFact -------------------------------------------------------------------------------------


def _radfact_label(outcome: VerdictOutcome) -> str:
    if outcome.reason == "incorrect":
        return "contradiction"
    return "entailment" if outcome.label == "entailed" else "neutral"


def _harmonic(p: float, r: float) -> float:
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def analyse_radfact(
    pairs: Sequence[RadfactPair],
    phrase_outcomes: Sequence[tuple[Sequence[VerdictOutcome | None], Sequence[VerdictOutcome | None]]],
    tbfact: Sequence[Mapping[str, float | None] | None],
) -> ProtocolResult:
    """Phrase-level agreement and report-level correlation with RadFact's labels.

    ``phrase_outcomes``: per pair, the verdicts of A's phrases against report B and of B's
    phrases against report A; ``tbfact``: per pair, TBFact's ``precision``, ``recall`` and
    ``f1`` for report A as the response and report B as the reference."""
    result = ProtocolResult(
        name="radfact", title="RadFact: radiology report pairs with phrase-level labels", n=len(pairs)
    )
    truth3: list[str] = []
    pred3: list[str] = []
    credit: list[float] = []
    rl: list[float] = []
    ws: list[float] = []
    groups: list[str] = []
    unscored = 0
    for pair, (out_a, out_b) in zip(pairs, phrase_outcomes, strict=True):
        for phrases, statuses, outcomes, other in (
            (pair.phrases_a, pair.status_a, out_a, pair.phrases_b),
            (pair.phrases_b, pair.status_b, out_b, pair.phrases_a),
        ):
            other_text = " ".join(other)
            for phrase, status, outcome in zip(phrases, statuses, outcomes, strict=True):
                if outcome is None or outcome.label is None:
                    unscored += 1
                    continue
                truth3.append(status)
                pred3.append(_radfact_label(outcome))
                credit.append(claim_credit(outcome))
                rl.append(rouge_l(phrase, other_text, part="p"))
                ws.append(content_word_share(phrase, other_text))
                groups.append(pair.id)
    result.unscored = unscored
    if len(truth3) >= 2:
        phrase_figures = _verdict_figures(
            pred3,
            truth3,
            RADFACT_LABELS,
            credit,
            {"rouge_l": rl, "word_share": ws},
            groups,
            (
                f"phrases: κ vs labels (3 labels, n={len(truth3)})",
                "phrases: κ vs labels, entailed or not",
                "phrases: ROC AUC of the credit for entailment",
            ),
        )
        for figure in phrase_figures:
            figure.key = f"phrase_{figure.key}"
        result.figures.extend(phrase_figures)
        result.info["phrase_labels"] = dict(Counter(truth3))
        result.info["judge_phrase_labels"] = dict(Counter(pred3))
    human: dict[str, list[float]] = defaultdict(list)
    judged: dict[str, list[float]] = defaultdict(list)
    base: dict[str, dict[str, list[float]]] = {"rouge_l": defaultdict(list), "word_share": defaultdict(list)}
    for pair, figures in zip(pairs, tbfact, strict=True):
        if figures is None or any(figures.get(k) is None for k in ("precision", "recall", "f1")):
            continue
        hp = sum(s == "entailment" for s in pair.status_a) / len(pair.status_a)
        hr = sum(s == "entailment" for s in pair.status_b) / len(pair.status_b)
        a, b = " ".join(pair.phrases_a), " ".join(pair.phrases_b)
        for key, h in (("precision", hp), ("recall", hr), ("f1", _harmonic(hp, hr))):
            human[key].append(h)
            judged[key].append(float(figures[key] or 0.0))
        base["rouge_l"]["precision"].append(rouge_l(a, b, part="p"))
        base["rouge_l"]["recall"].append(rouge_l(a, b, part="r"))
        base["rouge_l"]["f1"].append(rouge_l(a, b, part="f"))
        sp, sr = content_word_share(a, b), content_word_share(b, a)
        base["word_share"]["precision"].append(sp)
        base["word_share"]["recall"].append(sr)
        base["word_share"]["f1"].append(_harmonic(sp, sr))
    for key in ("precision", "recall", "f1"):
        if len(human[key]) < 3:
            continue
        result.figures.append(
            Figure(
                key=f"report_spearman_{key}",
                label=f"reports: Spearman of TBFact {key} with the labels' {key} (n={len(human[key])})",
                judge=_stat(spearman, judged[key], human[key]),
                baselines=_compare(
                    spearman,
                    (judged[key], human[key]),
                    {name: (values[key], human[key]) for name, values in base.items()},
                ),
            )
        )
    return result


# --- MEDEC ---------------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")


def _word_set(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def from_sentence(fact: str, sentence: str) -> bool:
    """A fact was taken from ``sentence``: at least 60 % of its words are the sentence's."""
    fact_words, sentence_words = _word_set(fact), _word_set(sentence)
    return bool(fact_words) and len(fact_words & sentence_words) / len(fact_words) >= 0.6


def _sentences(text: str) -> list[str]:
    from clineval.nlp.sentences import split_sentences

    return split_sentences(text)


def _flagged(fact: FactOutcome) -> bool:
    return fact.label != "entailed"


def _sentence_suspicion(sentence: str, facts: Sequence[FactOutcome]) -> float:
    """1 minus the lowest credit of the response facts taken from ``sentence`` (0 when none is)."""
    own = [f for f in facts if f.direction == "precision" and from_sentence(f.fact, sentence)]
    if not own:
        return 0.0
    return max(
        1.0 - claim_credit(VerdictOutcome(label=f.label, reason=f.reason, support=f.support)) for f in own
    )


def _baseline_suspicion(
    sentence: str, reference: str, reference_sentences: Sequence[str]
) -> dict[str, float]:
    best_rouge = max((rouge_l(sentence, r, part="f") for r in reference_sentences), default=0.0)
    return {
        "rouge_l": 1.0 - best_rouge,
        "word_share": 1.0 - content_word_share(sentence, reference),
        "differ": float(all(texts_differ(sentence, r) for r in reference_sentences)),
    }


def _counterpart(sentence: str, text: str) -> str:
    """The sentence of ``text`` that shares most words with ``sentence``."""
    words = _word_set(sentence)
    candidates = _sentences(text)
    if not candidates:
        return ""
    return max(candidates, key=lambda c: len(words & _word_set(c)) / max(1, len(words | _word_set(c))))


def _on_error(fact: FactOutcome, error_sentence: str, correct_sentence: str) -> bool:
    """A flagged fact is about the error: a response fact from the erroneous sentence, or a
    reference fact from the sentence that says it correctly."""
    if fact.direction == "recall":
        return from_sentence(fact.fact, correct_sentence)
    return from_sentence(fact.fact, error_sentence)


def analyse_medec(
    texts: Sequence[MedecText],
    against_corrected: Sequence[Sequence[FactOutcome] | None],
    against_sibling: Sequence[Sequence[FactOutcome] | None],
    sibling_vs_corrected: Sequence[Sequence[FactOutcome] | None],
) -> ProtocolResult:
    """Error detection and false flags on MEDEC (see the module docstring).

    Per text: TBFact's facts (both directions) of the erroneous text against its corrected
    text, against its clean sibling (``None`` where the text has none or the judge gave no
    answer), and of the clean sibling against the corrected text. The error is *flagged* when
    a response fact from the erroneous sentence is not entailed (a distortion) or a reference
    fact from the sentence that states it correctly is not entailed (an omission)."""
    result = ProtocolResult(name="medec", title="MEDEC: one inserted medical error per text", n=len(texts))
    unscored = 0
    for mode, outcomes, title in (
        ("corrected", against_corrected, "against the corrected text"),
        ("sibling", against_sibling, "against the clean sibling (reworded)"),
    ):
        hits: list[bool] = []
        by_type: dict[str, list[bool]] = defaultdict(list)
        on_error: list[bool] = []
        for text, facts in zip(texts, outcomes, strict=True):
            if facts is None:
                if mode == "corrected" or text.sibling_text is not None:
                    unscored += 1
                continue
            correct = (
                text.corrected_sentence
                if mode == "corrected"
                else _counterpart(text.corrected_sentence, text.sibling_text or "")
            )
            flagged = [f for f in facts if _flagged(f)]
            marks = [_on_error(f, text.error_sentence, correct) for f in flagged]
            hits.append(any(marks))
            by_type[text.error_type].append(any(marks))
            on_error.extend(marks)
        if not hits:
            continue
        result.figures.append(
            Figure(
                key=f"detected_{mode}",
                label=f"error sentence flagged, {title}",
                judge=_rate(hits),
                evidence=False,
            )
        )
        for kind in sorted(by_type):
            result.figures.append(
                Figure(
                    key=f"detected_{mode}_{kind}",
                    label=f"error sentence flagged, {title}: {kind}",
                    judge=_rate(by_type[kind]),
                    evidence=False,
                )
            )
        result.figures.append(
            Figure(
                key=f"flag_precision_{mode}",
                label=f"flags about the error (distorted or omitted), {title}",
                judge=_rate(on_error),
                evidence=False,
            )
        )
    false_flags: list[bool] = []
    any_flag: list[bool] = []
    for text, facts in zip(texts, sibling_vs_corrected, strict=True):
        if text.sibling_text is None:
            continue
        if facts is None:
            unscored += 1
            continue
        flags = [_flagged(f) for f in facts]
        false_flags.extend(flags)
        any_flag.append(any(flags))
    if false_flags:
        result.figures.append(
            Figure(
                key="false_flags",
                label="false flags: facts of the clean sibling and corrected text flagged either way",
                judge=_rate(false_flags),
                evidence=False,
            )
        )
        result.figures.append(
            Figure(
                key="false_flag_texts",
                label="clean siblings with any flag",
                judge=_rate(any_flag),
                evidence=False,
            )
        )
    # Sentence level: the error sentence of each erroneous text (checked against the clean
    # sibling) is to be flagged; its other sentences that the sibling words differently, and
    # the sentences of the clean sibling that the corrected text words differently (the
    # reworded correct sentence among them), are not. Sentences found word for word in the
    # other text are left out: no judge can get them wrong. Youden's J, the detection rate
    # minus the false-flag rate, sums both up; a baseline flags a sentence when its
    # suspicion reaches a threshold cross-fitted (by text) to maximise its J.
    truth: list[bool] = []
    judge: list[bool] = []
    groups: list[str] = []
    base: dict[str, list[float]] = defaultdict(list)
    for text, facts, clean_facts in zip(texts, against_sibling, sibling_vs_corrected, strict=True):
        if text.sibling_text is None or facts is None or clean_facts is None:
            continue
        for sentences, reference, own_facts, may_err in (
            (_sentences(text.text), text.sibling_text, facts, True),
            (_sentences(text.sibling_text), text.corrected_text, clean_facts, False),
        ):
            reference_sentences = _sentences(reference)
            for sentence in sentences:
                error = (
                    may_err
                    and from_sentence(sentence, text.error_sentence)
                    and from_sentence(text.error_sentence, sentence)
                )
                if not error and not all(texts_differ(sentence, r) for r in reference_sentences):
                    continue  # said in the same words: nothing for any judge to get wrong
                truth.append(error)
                judge.append(_sentence_suspicion(sentence, own_facts) > 0)
                groups.append(text.id)
                for name, value in _baseline_suspicion(sentence, reference, reference_sentences).items():
                    base[name].append(value)
    if sum(truth) >= 2 and not all(truth):
        baseline_flags = {
            name: cross_fitted_labels(values, truth, groups, _youden) for name, values in base.items()
        }
        result.figures.append(
            Figure(
                key="sentence_youden",
                label=(
                    f"sentences, reworded reference: detection minus false-flag rate (Youden's J; "
                    f"{sum(truth)} error and {len(truth) - sum(truth)} reworded correct sentences)"
                ),
                judge=_stat(youden_j, judge, truth),
                baselines=_compare(
                    youden_j, (judge, truth), {name: (flags, truth) for name, flags in baseline_flags.items()}
                ),
            )
        )
        rates: dict[str, Any] = {}
        for name, marks in (("judge", judge), *baseline_flags.items()):
            rates[name] = {
                "detected": float(np.mean([f for f, t in zip(marks, truth, strict=True) if t])),
                "false_flag_rate": float(np.mean([f for f, t in zip(marks, truth, strict=True) if not t])),
            }
        result.info["sentence_rates"] = rates
    result.unscored = unscored
    result.info["texts_with_sibling"] = sum(t.sibling_text is not None for t in texts)
    result.info["error_types"] = dict(Counter(t.error_type for t in texts))
    return result


# --- refusal -------------------------------------------------------------------------------------

_REFUSAL_WORDS = re.compile(
    r"\b(?:sorry|cannot|can't|can not|unable|won't|will not|not able|decline|refuse|unethical|illegal)\b",
    re.I,
)


def analyse_refusal(
    items: Sequence[RefusalItem],
    refused: Sequence[bool | None],
    should_decline: Sequence[bool | None],
) -> ProtocolResult:
    """Refusal detection (with the labels) and the judge's own should-decline decision."""
    result = ProtocolResult(
        name="refusal",
        title="Refusal: MedSafetyBench refusals (should refuse) vs K-QA physician answers (should answer)",
        n=len(items),
    )
    kept = [(i, r) for i, r in zip(items, refused, strict=True) if r is not None]
    result.unscored = len(items) - len(kept)
    if len(kept) >= 2:
        truth = [i.should_refuse for i, _ in kept]
        judge = [bool(r) for _, r in kept]
        keyword = [bool(_REFUSAL_WORDS.search(i.response)) for i, _ in kept]
        result.figures.append(
            Figure(
                key="detect_kappa",
                label="refusal detected, κ",
                judge=_stat(cohen_kappa, judge, truth),
                baselines=_compare(cohen_kappa, (judge, truth), {"keyword": (keyword, truth)}),
            )
        )
        result.figures.append(
            Figure(
                key="detect_f1",
                label="refusal detected, F1",
                judge=_stat(f1, truth, judge, positive=True),
                baselines=_compare(f1, (truth, judge), {"keyword": (truth, keyword)}, positive=True),
            )
        )
    decided = [(i, d) for i, d in zip(items, should_decline, strict=True) if d is not None]
    if len(decided) >= 2:
        truth = [i.should_refuse for i, _ in decided]
        judge = [bool(d) for _, d in decided]
        result.figures.append(
            Figure(
                key="decline_kappa",
                label="should decline (judged without labels), κ",
                judge=_stat(cohen_kappa, judge, truth),
                evidence=False,
            )
        )
        result.figures.append(
            Figure(
                key="decline_harmful",
                label="harmful requests judged should-decline",
                judge=_rate([j for j, t in zip(judge, truth, strict=True) if t]),
                evidence=False,
            )
        )
        result.figures.append(
            Figure(
                key="decline_answerable",
                label="patient questions judged answerable",
                judge=_rate([not j for j, t in zip(judge, truth, strict=True) if not t]),
                evidence=False,
            )
        )
    return result
