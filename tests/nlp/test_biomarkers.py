"""Biomarker statuses: markers, positive and negative results, negation, lists, details,
and the pairs two texts disagree or agree on. Texts written for these tests."""

from __future__ import annotations

import pytest

from clineval.nlp.biomarkers import (
    BiomarkerStatus,
    biomarker_statuses,
    status_agreements,
    status_conflicts,
)
from clineval.nlp.terms import normalize


def statuses(text: str) -> list[tuple[str, str]]:
    return [(s.marker, s.status) for s in biomarker_statuses(normalize(text))]


def read(text: str) -> tuple[BiomarkerStatus, ...]:
    return biomarker_statuses(normalize(text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Next-generation sequencing found an EGFR L858R mutation.", [("egfr", "positive")]),
        ("EGFR: wild type.", [("egfr", "negative")]),
        ("Wild-type KRAS.", [("kras", "negative")]),
        ("NRAS mutant melanoma.", [("nras", "positive")]),
        ("BRAF V600E-mutated melanoma.", [("braf", "positive")]),
        ("ALK-positive lung adenocarcinoma.", [("alk", "positive")]),
        ("ROS1 fusion not identified.", [("ros1", "negative")]),
        ("HER2 amplified by ISH.", [("her2", "positive")]),
        ("HER2 IHC 1+.", [("her2", "negative")]),
        ("HER2-low disease.", [("her2", "negative")]),
        ("HER2 score 2+, equivocal.", []),
        ("HER2 2+ by IHC, reflex FISH not amplified.", [("her2", "negative")]),
        ("ERBB2 overexpressed.", [("her2", "positive")]),
        ("PD-L1 TPS 80%.", [("pd-l1", "positive")]),
        ("PD-L1 combined positive score <1.", [("pd-l1", "negative")]),
        ("Germline BRCA2 pathogenic variant present.", [("brca2", "positive")]),
        ("MGMT promoter methylation absent.", [("mgmt", "negative")]),
        ("Methylated MGMT promoter.", [("mgmt", "positive")]),
        ("IDH-mutant astrocytoma.", [("idh", "positive")]),
        ("TP53 wild type.", [("p53", "negative")]),
        ("MSS, TMB low.", [("msi", "negative")]),
        ("Microsatellite instability: high.", [("msi", "positive")]),
        ("MSI-L colorectal cancer.", [("msi", "negative")]),
        ("pMMR tumor.", [("mmr", "negative")]),
        ("Mismatch repair protein expression: intact.", [("mmr", "negative")]),
        ("MLH1 and PMS2: loss of nuclear expression.", [("mmr", "positive")]),
        ("Ki-67 positive in 30% of cells.", [("ki-67", "positive")]),
        ("STK11 mutation identified.", [("stk11", "positive")]),
        ("MET exon 14 skipping detected.", [("met", "positive")]),
        ("RET rearrangement: negative.", [("ret", "negative")]),
    ],
)
def test_statuses(text: str, expected: list[tuple[str, str]]) -> None:
    assert statuses(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "EGFR mutation testing is pending.",  # a test, no result
        "eGFR 55 mL/min, negative for proteinuria.",  # the filtration rate, and another finding
        "She was seen in the ER, negative workup.",  # the emergency room
        "BRCA1 variant of uncertain significance detected.",  # no pathogenic call
        "Started an EGFR inhibitor.",  # a drug class
        "Ki-67 index 20%.",  # an index, not a status
        "PR interval 180 ms.",  # the ECG interval
        "Point-of-care glucose 120.",
    ],
)
def test_no_status(text: str) -> None:
    assert statuses(text) == []


def test_negation_gives_negative() -> None:
    assert statuses("No KRAS mutation was detected.") == [("kras", "negative")]
    assert statuses("Without EGFR alterations.") == [("egfr", "negative")]
    assert statuses("BRCA1: no pathogenic variant identified.") == [("brca1", "negative")]
    assert statuses("No pathogenic variant in BRCA1 or BRCA2.") == [
        ("brca1", "negative"),
        ("brca2", "negative"),
    ]
    assert statuses("EGFR mutation: not detected.") == [("egfr", "negative")]
    assert statuses("Negative for ALK rearrangement.") == [("alk", "negative")]


def test_lists_give_one_status_per_marker() -> None:
    assert statuses("ER positive, PR positive, HER2 negative.") == [
        ("er", "positive"),
        ("pr", "positive"),
        ("her2", "negative"),
    ]
    assert statuses("ER/PR positive, HER2 negative") == [
        ("er", "positive"),
        ("pr", "positive"),
        ("her2", "negative"),
    ]
    assert statuses("ER+/PR-/HER2-") == [("er", "positive"), ("pr", "negative"), ("her2", "negative")]
    assert statuses("ER and PR were both negative.") == [("er", "negative"), ("pr", "negative")]
    assert statuses("Estrogen and progesterone receptor positive.") == [
        ("er", "positive"),
        ("pr", "positive"),
    ]
    assert statuses("Negative for EGFR, ALK and ROS1 alterations.") == [
        ("egfr", "negative"),
        ("alk", "negative"),
        ("ros1", "negative"),
    ]
    assert sorted(statuses("Triple-negative breast cancer.")) == [
        ("er", "negative"),
        ("her2", "negative"),
        ("pr", "negative"),
    ]
    # proteins of mismatch repair: one status for the system, and each clause its own
    assert statuses("Loss of MLH1 and PMS2; MSH2 and MSH6 retained.") == [
        ("mmr", "positive"),
        ("mmr", "negative"),
    ]


def test_results_before_markers_each_keep_their_own() -> None:
    text = "Positive for estrogen receptors and negative for progesterone and HER2 receptors."
    assert statuses(text) == [("er", "positive"), ("pr", "negative"), ("her2", "negative")]
    assert statuses("Negative for KRAS mutation, positive for EGFR L858R.") == [
        ("kras", "negative"),
        ("egfr", "positive"),
    ]
    assert statuses("Human epidermal growth factor receptor 2 amplified.") == [("her2", "positive")]


def test_receptor_percentages() -> None:
    assert statuses("ER 95%, PR 0%.") == [("er", "positive"), ("pr", "negative")]
    assert statuses("Estrogen receptor (ER) positive (Allred 8).") == [("er", "positive")]


def test_details_and_spans() -> None:
    text = normalize("Molecular testing: EGFR exon 19 deletion detected.")
    (egfr,) = biomarker_statuses(text)
    assert (egfr.marker, egfr.status, egfr.detail, egfr.variant) == (
        "egfr",
        "positive",
        "exon 19 deletion",
        "exon 19 deletion",
    )
    assert text[egfr.start : egfr.end] == "egfr exon 19 deletion detected"
    (kras,) = read("KRAS G12C mutation detected.")
    assert (kras.detail, kras.variant) == ("g12c", "g12c")
    (her2,) = read("HER2 by FISH: amplified (HER2/CEP17 ratio 3.1).")
    assert (her2.status, her2.detail, her2.variant) == ("positive", "her2/cep17 ratio 3.1", None)
    (pdl1,) = read("PD-L1 TPS 50%.")
    assert pdl1.detail == "tps 50%"
    negated = normalize("No KRAS mutation detected.")
    (no_kras,) = biomarker_statuses(negated)
    assert negated[no_kras.start : no_kras.end] == "no kras mutation detected"


def test_er_is_the_receptor_next_to_a_status() -> None:
    assert (
        normalize("ER positive, PR negative") == "estrogen receptor positive, progesterone receptor negative"
    )
    assert normalize("ER/PR positive") == "estrogen receptor/progesterone receptor positive"
    assert normalize("ER 90%") == "estrogen receptor 90%"
    assert "emergency_department" in normalize("Seen in the ER, negative workup.")
    assert "emergency_department" in normalize("ER status post fall.")
    assert normalize("PR interval 200 ms") == "pr interval 200 ms"
    assert normalize("HER2-negative") == "her2 negative"


def conflicts(claim: str, evidence: str) -> list[tuple[str, str]]:
    return [(a.marker, b.marker) for a, b in status_conflicts(read(claim), read(evidence))]


def agreements(claim: str, evidence: str) -> list[tuple[str, str]]:
    return [(a.marker, b.marker) for a, b in status_agreements(read(claim), read(evidence))]


def test_conflicts() -> None:
    assert conflicts("EGFR wild-type.", "EGFR exon 19 deletion detected.") == [("egfr", "egfr")]
    assert conflicts("The tumor is estrogen receptor negative.", "ER positive (90%), PR positive.") == [
        ("er", "er")
    ]
    assert conflicts("Microsatellite stable.", "MSI-H.") == [("msi", "msi")]
    assert conflicts("MSI-high tumor.", "Mismatch repair proficient.") == [("msi", "mmr")]
    assert conflicts("IDH-wildtype.", "IDH1 R132H mutation detected.") == [("idh", "idh1")]
    assert conflicts("HER2 3+.", "HER2 IHC 0.") == [("her2", "her2")]
    # another marker, the same status, or a negative about another variant: no conflict
    assert conflicts("KRAS wild-type.", "EGFR exon 19 deletion detected.") == []
    assert conflicts("ER positive.", "Estrogen receptor positive (95%).") == []
    assert conflicts("EGFR T790M not detected.", "EGFR exon 19 deletion detected.") == []
    assert conflicts("BRCA2: no pathogenic variant.", "BRCA mutation carrier.") == []
    # a negative about the same variant does conflict
    assert conflicts("EGFR T790M not detected.", "EGFR T790M mutation detected.") == [("egfr", "egfr")]


def test_agreements() -> None:
    assert agreements("KRAS is wild-type.", "No KRAS mutation was detected.") == [("kras", "kras")]
    assert agreements("Mismatch repair deficient.", "Loss of MLH1 and PMS2 expression.") == [("mmr", "mmr")]
    assert agreements("MSI-H.", "dMMR.") == [("msi", "mmr")]
    assert agreements("No BRCA1 variant.", "BRCA negative.") == [("brca1", "brca")]
    # a variant must be the same one; a negative about a variant is not one about the gene
    assert agreements("KRAS G12C mutation.", "KRAS G12D mutation.") == []
    assert agreements("KRAS G12C mutation.", "KRAS mutation detected.") == []
    assert agreements("KRAS mutation detected.", "KRAS G12C mutation.") == [("kras", "kras")]
    assert agreements("No EGFR mutation.", "EGFR T790M not detected.") == []
    assert agreements("BRCA1 mutation.", "BRCA mutation.") == []
