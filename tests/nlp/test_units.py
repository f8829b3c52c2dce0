"""Unit conversions of quantities: temperatures, laboratory values in SI and conventional
units (by analyte), masses, body weights and cell counts. Values worked by hand; texts
written for these tests."""

from __future__ import annotations

import pytest

from clineval.nlp.clinical import Quantity, extract_quantities
from clineval.nlp.terms import normalize


def one(text: str) -> Quantity:
    (quantity,) = extract_quantities(normalize(text))
    return quantity


def agree(a: str, b: str) -> bool:
    """Comparable and the same value, checked both ways (the relation is symmetric)."""
    first, second = one(a), one(b)
    forward = first.comparable(second) and first.same_value(second)
    backward = second.comparable(first) and second.same_value(first)
    assert forward == backward, (a, b)
    return forward


def test_temperatures_are_read_in_celsius() -> None:
    fahrenheit = one("Temperature 101.3 °F.")
    assert (fahrenheit.dimension, fahrenheit.unit) == ("temperature", "f")
    assert fahrenheit.values[0] == pytest.approx(38.5)  # (101.3 - 32) x 5/9
    assert fahrenheit.precision[0] == pytest.approx(0.05 * 5 / 9)
    celsius = one("Tmax 38.5C")
    assert (celsius.dimension, celsius.unit, celsius.values) == ("temperature", "c", (38.5,))
    assert one("98.6 degrees Fahrenheit").values[0] == pytest.approx(37.0)
    assert one("body temperature of 37 degrees Celsius").values == (37.0,)


def test_a_temperature_needs_a_scale_or_a_temperature_word() -> None:
    # a number or "degrees" after a temperature word, on the scale its value fits
    assert (one("temp 38.9").dimension, one("temp 38.9").unit) == ("temperature", "c")
    assert (one("T 102.4").unit, round(one("T 102.4").values[0], 2)) == ("f", 39.11)
    assert one("fever to 103 degrees").unit == "f"
    assert one("Afebrile, 36.8").unit == "c"
    # "degrees" alone is an angle (or an unknown scale); a letter is a scale in range only
    assert one("Flexion to 90 degrees.").dimension == "degrees"
    assert one("Keep it below 25 degrees.").dimension == "degrees"
    assert one("Tumor stage 3c.").dimension == "number"
    assert one("at 38.2 C").unit == "c"  # a body temperature's range


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Temperature 38.5 °C.", "Temperature 101.3 °F."),  # 38.5 x 9/5 + 32 = 101.3
        ("Fever to 39 °C.", "Fever to 102.2 °F."),
        ("Temperature 38.5 °C.", "Temperature 101 °F."),  # 101.3 rounded to whole degrees
        ("Temp 37.0", "Temperature 98.6 F"),  # a bare number after "temp" is Celsius
        ("Keep at 2-8 °C.", "Keep at 36-46 °F."),  # 35.6-46.4 °F, rounded
        ("Temperature 38.9 °C.", "Temperature 102.2 °F."),  # 39.0 °C: a tenth of double rounding
    ],
)
def test_temperatures_in_other_scales_agree(a: str, b: str) -> None:
    assert agree(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Temperature 38.5 °C.", "Temperature 39.5 °C."),
        ("Temperature 38.5 °C.", "Temperature 103.1 °F."),  # 39.5 °C
        ("Temperature 38.5 °C.", "Temperature 102.2 °F."),  # 39.0 °C: half a degree off
        ("Temperature 38 °C.", "Temperature 102 °F."),  # 38.9 °C would round to 39
        ("Temperature 36.9 °C.", "Temperature 97.9 °F."),  # 36.6 °C
    ],
)
def test_different_temperatures_conflict(a: str, b: str) -> None:
    assert one(a).comparable(one(b)) and not agree(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Glucose 180 mg/dL.", "Glucose 10 mmol/L."),  # 180 / 18.0 = 10.0
        ("Fasting blood sugar 126 mg/dL.", "Fasting glucose 7.0 mmol/L."),  # 7.0
        ("Creatinine 1.2 mg/dL.", "Creatinine 106 µmol/L."),  # 1.2 x 88.4 = 106.1
        ("Serum creatinine 2.0 mg/dL", "Cr 177 umol/L"),  # 176.8
        ("Total cholesterol 200 mg/dL.", "Total cholesterol 5.17 mmol/L."),  # 200 / 38.67 = 5.17
        ("LDL 130 mg/dL", "LDL cholesterol 3.4 mmol/L"),  # 3.36
        ("Triglycerides 150 mg/dL", "Triglycerides 1.7 mmol/L"),  # 150 / 88.57 = 1.69
        ("Total bilirubin 1.2 mg/dL", "Bilirubin 21 µmol/L"),  # 1.2 x 17.1 = 20.5
        ("Calcium 10 mg/dL", "Calcium 2.5 mmol/L"),  # 10 x 0.2495 = 2.495
        ("Vitamin D 20 ng/mL", "Vitamin D 50 nmol/L"),  # 20 x 2.496 = 49.9
        ("HbA1c 7%", "HbA1c 53 mmol/mol"),  # (7 - 2.152) / 0.09148 = 53.0
    ],
)
def test_laboratory_values_in_si_and_conventional_units_agree(a: str, b: str) -> None:
    assert agree(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Glucose 200 mg/dL.", "Glucose 10 mmol/L."),  # 11.1 mmol/L
        ("Glucose 10 mg/dL.", "Glucose 10 mmol/L."),
        ("Creatinine 1.2 mg/dL.", "Creatinine 160 µmol/L."),  # 1.81 mg/dL
        ("HbA1c 8%", "HbA1c 53 mmol/mol"),  # 8 % is 64 mmol/mol
    ],
)
def test_different_laboratory_values_conflict(a: str, b: str) -> None:
    assert one(a).comparable(one(b)) and not agree(a, b)


def test_a_conversion_needs_the_analyte() -> None:
    # mg/dL and mmol/L meet only through an analyte's factor: not for an unknown one
    assert one("Glucose 10 mmol/L").analyte == "glucose"
    assert one("Blood sugar 180 mg/dL").analyte == "glucose"
    assert one("Xylose 10 mmol/L").analyte is None
    assert not one("Xylose 10 mmol/L").comparable(one("Xylose 180 mg/dL"))
    # nor across two analytes
    assert not one("Glucose 10 mmol/L").comparable(one("Creatinine 180 mg/dL"))
    # the nearest analyte before the value is its own
    second = extract_quantities(normalize("Glucose 180 mg/dL, creatinine 1.2 mg/dL"))[1]
    assert second.analyte == "creatinine"
    # a value in parentheses is of the analyte before it
    first, paren = extract_quantities(normalize("Creatinine 1.2 mg/dL (106 µmol/L)"))
    assert paren.analyte == "creatinine" and first.same_value(paren)
    # "hemoglobin A1c" is not hemoglobin
    assert one("Hemoglobin A1c 7%").analyte == "hemoglobin_a1c"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Hemoglobin 9.5 g/dL.", "Hemoglobin 95 g/L."),
        ("Albumin 3.5 g/dL", "Albumin 35 g/L"),
        ("Troponin 0.04 ng/mL", "Troponin 40 ng/L"),
        ("Ferritin 30 ng/mL", "Ferritin 30 mcg/L"),
        ("She took 1 g of paracetamol.", "She took 1000 mg of paracetamol."),
        ("Levothyroxine 0.1 mg", "Levothyroxine 100 mcg"),
        ("Weight 70 kg.", "Weight 154 lb."),  # 154.3 lb
        ("Birth weight 3.5 kg.", "Birth weight 7.7 lb."),  # 7.72 lb
        ("He weighs 220 lb.", "Weight 100 kg."),  # 220.5 lb, with 2.2 lb/kg
        ("Platelets 150,000/µL", "Platelets 150 x10^9/L"),
        ("Platelets 150,000/µL", "Platelets 150 K/uL"),
        ("WBC 4.1 × 10⁹/L", "WBC 4100/µL"),
        ("Platelets 150", "Platelet count 150,000/µL"),  # a bare count is thousands per µL
        ("Potassium 4.5 mmol/L", "Potassium 4.5 mEq/L"),
    ],
)
def test_the_same_value_in_other_units_agrees(a: str, b: str) -> None:
    assert agree(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Platelets 15", "Platelets 150"),
        ("Platelets 15", "Platelet count 150,000/µL"),
        ("Platelet count 15,000/µL", "Platelet count 150,000/µL"),
        ("WBC 4.1 x10^9/L", "WBC 41 x10^9/L"),
        ("Lorazepam 0.5 mg", "Lorazepam 5 mg"),
        ("Levothyroxine 50 mcg", "Levothyroxine 0.5 mg"),  # ten-fold across units
        ("Troponin 0.04 ng/mL", "Troponin 400 ng/L"),
        ("Hemoglobin 9.5 g/dL", "Hemoglobin 9.5 g/L"),
        ("Weight 70 kg.", "Weight 150 lb."),  # 68.0 kg
        ("Levothyroxine 50 mcg", "Levothyroxine 51 mcg"),  # the same unit: the same number
    ],
)
def test_a_real_difference_stays_a_conflict(a: str, b: str) -> None:
    assert one(a).comparable(one(b)) and not agree(a, b)


def test_count_units() -> None:
    wbc = one("WBC 4.1 x10^9/L")
    assert wbc.dimension == "count_ul" and wbc.values[0] == pytest.approx(4100.0)
    assert one("Plt 45K").values == (45000.0,)  # a bare number (normalised from "45K")
    assert one("eGFR 22 mL/min/1.73 m2").dimension == "gfr"
