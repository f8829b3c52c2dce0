"""Quantities, units, frequencies, dates, sides and drugs."""

from __future__ import annotations

from clineval.nlp.clinical import (
    drug_role,
    extract_dates,
    extract_frequencies,
    extract_quantities,
    extract_sides,
    find_drugs,
    is_drug,
)
from clineval.nlp.terms import normalize


def quantities(text: str) -> list[tuple[str, tuple[float, ...]]]:
    return [(q.dimension, tuple(round(v, 9) for v in q.values)) for q in extract_quantities(normalize(text))]


def test_units_are_normalised() -> None:
    assert quantities("metformin 500 mg") == [("mass", (0.5,))]
    assert quantities("metformin 0.5 g") == [("mass", (0.5,))]
    assert quantities("levothyroxine 50 mcg") == [("mass", (5e-05,))]
    assert quantities("A1c 7.2%") == [("percent", (7.2,))]
    assert quantities("glucose 5.5 mmol/L") == [("conc_mmol", (5.5,))]
    assert quantities("for 2 weeks") == [("time", (14.0,))]


def test_blood_pressure_age_and_anchor() -> None:
    (bp,) = extract_quantities(normalize("BP 140/90"))
    assert bp.dimension == "pressure" and bp.values == (140.0, 90.0) and "blood_pressure" in bp.anchor
    (age,) = extract_quantities(normalize("a 59-year-old male"))
    assert age.dimension == "age" and age.values == (59.0,)
    (dose,) = extract_quantities(normalize("He takes lisinopril 20 mg daily"))
    assert "lisinopril" in dose.anchor


def test_bare_numbers_compare_with_units() -> None:
    (bare,) = extract_quantities(normalize("A1c elevated at 8"))
    (unit,) = extract_quantities(normalize("A1c 8%"))
    assert bare.comparable(unit) and bare.same_value(unit)


def test_dates() -> None:
    (date,) = extract_dates(normalize("started on March 3, 2021"))
    assert (date.year, date.month, date.day) == (2021, 3, 3)
    (numeric,) = extract_dates(normalize("seen 4/5/2020"))
    assert (numeric.year, numeric.month, numeric.day) == (2020, 4, 5)
    assert date.conflicts(numeric)
    assert extract_dates(normalize("He may need surgery.")) == []
    (year,) = extract_dates(normalize("diagnosed in 2019"))
    assert year.year == 2019 and year.month is None


def test_frequencies() -> None:
    assert [(f[0], f[1]) for f in extract_frequencies(normalize("metformin 1000 mg twice a day"))] == [
        ("twice_daily", 2.0)
    ]
    assert [(f[0], f[1]) for f in extract_frequencies(normalize("lisinopril once daily"))] == [
        ("once_daily", 1.0)
    ]


def test_sides() -> None:
    sides = extract_sides(normalize("Pain in the left knee and right hip, edema bilaterally."))
    assert [(s.side, s.site) for s in sides] == [("left", "knee"), ("right", "hip"), ("bilateral", "edema")]


def test_drugs() -> None:
    assert drug_role("lisinopril") == drug_role("losartan") == "antihypertensive"
    assert drug_role("metformin") == "antidiabetic"
    assert is_drug("pantoprazole") and is_drug("rosuvastatin") and is_drug("ssri")
    assert not is_drug("question") and not is_drug("medicine")
    assert [name for name, _ in find_drugs(normalize("Takes Tylenol and Lipitor"))] == [
        "acetaminophen",
        "atorvastatin",
    ]
