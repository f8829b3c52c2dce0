"""Clinical details that decide whether two statements agree: numbers with units, doses
and frequencies, dates and durations, laterality, and drugs.

All functions take text already passed through :func:`clineval.nlp.terms.normalize`, so
"twice a day" arrives as ``twice_daily`` and "Lexapro" as ``escitalopram``.

Units are normalised to a base unit per dimension (mass to grams, volume to litres,
durations to days, concentrations of mass to mg/dL and molar ones to mmol/L, cell counts
to per microlitre, temperatures to degrees Celsius) so "0.5 g" equals "500 mg" and "95
g/L" equals "9.5 g/dL". A laboratory value also keeps its *analyte* ("glucose"), which
links mg/dL and mmol/L by the analyte's standard SI conversion factor: "glucose 10
mmol/L" is "glucose 180 mg/dL", and an analyte without a known factor is compared in its
own unit only. Values written in other units agree within the rounding of the conversion
("101.3 °F" / "38.5 °C", "154 lb" / "70 kg"); in the same unit they must be equal. A
temperature is read from a named scale ("°F", "degrees Celsius"), from a bare "F" or "C"
after a temperature word or in the range of a body temperature, and from a number or
"degrees" after a temperature word ("temp 38.5", "Tmax 102 degrees"); "degrees" alone is
an angle or an unknown scale. A :class:`Quantity` also keeps its
*anchor*: the content words just before (and right after) it, such as "lisinopril" in
"lisinopril 20 mg" or "blood_pressure" in "BP 120/80". Two quantities are about the same
thing when their dimensions agree and their anchors share a word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from clineval.nlp.lexicon import BODY_SITES, DRUG_CLASS_WORDS, DRUG_ROLE, DRUG_SUFFIXES
from clineval.nlp.terms import Token, is_stopword, tokenize

__all__ = [
    "DateMention",
    "Quantity",
    "SideMention",
    "drug_role",
    "extract_dates",
    "extract_frequencies",
    "extract_quantities",
    "extract_sides",
    "find_drugs",
    "is_drug",
]

# unit text -> (dimension, factor to the base unit). Concentrations of mass share one
# dimension (base mg/dL, so "9.5 g/dL" is "95 g/L"), and so do molar concentrations (base
# mmol/L, so "0.106 mmol/L" is "106 µmol/L"); the two meet only through an analyte's molar
# mass (:data:`_ANALYTE_MMOL_PER_MGDL`). Temperatures are converted to degrees Celsius apart
# from this table (an offset, not a factor).
_UNITS: dict[str, tuple[str, float]] = {
    "mcg": ("mass", 1e-6),
    "ug": ("mass", 1e-6),
    "microgram": ("mass", 1e-6),
    "micrograms": ("mass", 1e-6),
    "mg": ("mass", 1e-3),
    "milligram": ("mass", 1e-3),
    "milligrams": ("mass", 1e-3),
    "mgs": ("mass", 1e-3),
    "g": ("mass", 1.0),
    "gm": ("mass", 1.0),
    "gram": ("mass", 1.0),
    "grams": ("mass", 1.0),
    "grams/day": ("mass", 1.0),
    "kg": ("bodymass", 1.0),
    "kilogram": ("bodymass", 1.0),
    "kilograms": ("bodymass", 1.0),
    "kgs": ("bodymass", 1.0),
    "lb": ("bodymass", 0.45359237),
    "lbs": ("bodymass", 0.45359237),
    "pound": ("bodymass", 0.45359237),
    "pounds": ("bodymass", 0.45359237),
    "ml": ("volume", 1e-3),
    "milliliter": ("volume", 1e-3),
    "milliliters": ("volume", 1e-3),
    "cc": ("volume", 1e-3),
    "l": ("volume", 1.0),
    "liter": ("volume", 1.0),
    "liters": ("volume", 1.0),
    "litre": ("volume", 1.0),
    "litres": ("volume", 1.0),
    "oz": ("volume", 0.0295735),
    "ounces": ("volume", 0.0295735),
    "mg/dl": ("conc_mgdl", 1.0),
    "g/dl": ("conc_mgdl", 1e3),
    "g/l": ("conc_mgdl", 1e2),
    "mg/ml": ("conc_mgdl", 1e2),
    "mg/l": ("conc_mgdl", 1e-1),
    "mcg/ml": ("conc_mgdl", 1e-1),
    "ug/ml": ("conc_mgdl", 1e-1),
    "mcg/dl": ("conc_mgdl", 1e-3),
    "ug/dl": ("conc_mgdl", 1e-3),
    "mcg/l": ("conc_mgdl", 1e-4),
    "ug/l": ("conc_mgdl", 1e-4),
    "ng/ml": ("conc_mgdl", 1e-4),
    "ng/dl": ("conc_mgdl", 1e-6),
    "ng/l": ("conc_mgdl", 1e-7),
    "pg/ml": ("conc_mgdl", 1e-7),
    "mol/l": ("conc_mmol", 1e3),
    "mmol/l": ("conc_mmol", 1.0),
    "meq/l": ("conc_mmol", 1.0),
    "µmol/l": ("conc_mmol", 1e-3),
    "μmol/l": ("conc_mmol", 1e-3),
    "umol/l": ("conc_mmol", 1e-3),
    "mcmol/l": ("conc_mmol", 1e-3),
    "micromol/l": ("conc_mmol", 1e-3),
    "nmol/l": ("conc_mmol", 1e-6),
    "pmol/l": ("conc_mmol", 1e-9),
    "mmol/mol": ("mmol_per_mol", 1.0),
    "u/l": ("conc_ul", 1.0),
    "iu/l": ("conc_ul", 1.0),
    # blood cell counts, per microlitre ("150,000/µL", "150 K/µL", "4.1 x10^9/L": see _SCI_COUNT)
    "/µl": ("count_ul", 1.0),
    "/μl": ("count_ul", 1.0),
    "/ul": ("count_ul", 1.0),
    "/mcl": ("count_ul", 1.0),
    "/mm3": ("count_ul", 1.0),
    "cells/µl": ("count_ul", 1.0),
    "cells/μl": ("count_ul", 1.0),
    "cells/ul": ("count_ul", 1.0),
    "cells/mm3": ("count_ul", 1.0),
    "k/µl": ("count_ul", 1e3),
    "k/μl": ("count_ul", 1e3),
    "k/ul": ("count_ul", 1e3),
    "k/mcl": ("count_ul", 1e3),
    "ml/min/1.73 m2": ("gfr", 1.0),
    "ml/min/1.73m2": ("gfr", 1.0),
    "ml/min/1.73 m²": ("gfr", 1.0),
    "ml/min/1.73m²": ("gfr", 1.0),
    "ml/min": ("flow_mlmin", 1.0),
    "mg/kg": ("dose_per_kg", 1.0),
    "mcg/kg": ("dose_per_kg", 1e-3),
    "mmhg": ("pressure", 1.0),
    "%": ("percent", 1.0),
    "percent": ("percent", 1.0),
    "bpm": ("rate", 1.0),
    "beats": ("rate", 1.0),
    "/min": ("rate", 1.0),
    "breaths": ("rate", 1.0),
    "units": ("units", 1.0),
    "unit": ("units", 1.0),
    "iu": ("units", 1.0),
    "mm": ("length", 1e-3),
    "millimeter": ("length", 1e-3),
    "millimeters": ("length", 1e-3),
    "cm": ("length", 1e-2),
    "centimeter": ("length", 1e-2),
    "centimeters": ("length", 1e-2),
    "m": ("length", 1.0),
    "in": ("length_in", 0.0254),
    "inch": ("length", 0.0254),
    "inches": ("length", 0.0254),
    # temperatures: the scale is read by _temperature (the factor is unused)
    "degrees fahrenheit": ("temperature", 1.0),
    "degrees celsius": ("temperature", 1.0),
    "degrees centigrade": ("temperature", 1.0),
    "degree fahrenheit": ("temperature", 1.0),
    "degree celsius": ("temperature", 1.0),
    "degrees f": ("temperature", 1.0),
    "degrees c": ("temperature", 1.0),
    "degree f": ("temperature", 1.0),
    "degree c": ("temperature", 1.0),
    "deg f": ("temperature", 1.0),
    "deg c": ("temperature", 1.0),
    "fahrenheit": ("temperature", 1.0),
    "celsius": ("temperature", 1.0),
    "centigrade": ("temperature", 1.0),
    "degrees": ("degrees", 1.0),
    "degree": ("degrees", 1.0),
    "f": ("temperature", 1.0),
    "c": ("temperature", 1.0),
    "second": ("time", 1 / 86400),
    "seconds": ("time", 1 / 86400),
    "sec": ("time", 1 / 86400),
    "minute": ("time", 1 / 1440),
    "minutes": ("time", 1 / 1440),
    "min": ("time", 1 / 1440),
    "mins": ("time", 1 / 1440),
    "hour": ("time", 1 / 24),
    "hours": ("time", 1 / 24),
    "hr": ("time", 1 / 24),
    "hrs": ("time", 1 / 24),
    "h": ("time", 1 / 24),
    "day": ("time", 1.0),
    "days": ("time", 1.0),
    "night": ("time", 1.0),
    "nights": ("time", 1.0),
    "week": ("time", 7.0),
    "weeks": ("time", 7.0),
    "wk": ("time", 7.0),
    "wks": ("time", 7.0),
    "month": ("time", 30.4),
    "months": ("time", 30.4),
    "mo": ("time", 30.4),
    "year": ("time", 365.25),
    "years": ("time", 365.25),
    "yr": ("time", 365.25),
    "yrs": ("time", 365.25),
    "tablet": ("count_tab", 1.0),
    "tablets": ("count_tab", 1.0),
    "tab": ("count_tab", 1.0),
    "tabs": ("count_tab", 1.0),
    "pill": ("count_tab", 1.0),
    "pills": ("count_tab", 1.0),
    "capsule": ("count_tab", 1.0),
    "capsules": ("count_tab", 1.0),
    "puff": ("count_puff", 1.0),
    "puffs": ("count_puff", 1.0),
    "drop": ("count_drop", 1.0),
    "drops": ("count_drop", 1.0),
    "times": ("count_times", 1.0),
    "x": ("count_times", 1.0),
}
_UNIT_ALTS = sorted(_UNITS, key=len, reverse=True)
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
# "4.1 x10^9/L", "4.1 × 10(9)/L", "150 x 10^3/µL": a cell count in scientific notation.
_SCI_COUNT = (
    r"(?P<sci>(?:[x×*]\s*)?10\s*(?:(?:\^|\*\*?|e)\s*\(?(?P<exp>\d{1,2})\)?|\((?P<exp2>\d{1,2})\)"
    r"|(?P<exp3>[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,2}))\s*/\s*(?P<per>l|µl|μl|ul|mcl|mm3)\b)"
)
_QUANTITY_RE = re.compile(
    r"(?<![\w./])(?P<num>\d+(?:\.\d+)?(?:/\d+(?:\.\d+)?)?)"
    r"(?:\s*(?:-|to)\s*(?P<num2>\d+(?:\.\d+)?))?"
    r"(?:\s*" + _SCI_COUNT + r"|\s*(?P<unit>" + "|".join(re.escape(u) for u in _UNIT_ALTS) + r")(?![a-z]))?"
)
_BARE_COMPARABLE = frozenset(
    {"mass", "units", "percent", "conc_mgdl", "conc_mmol", "conc_ul", "count_ul", "pressure", "temperature"}
)

# Analyte-specific conversions between a concentration of mass (mg/dL) and a molar one
# (mmol/L): mmol/L per mg/dL, which is 10 / the molar mass in g/mol. These are the
# standard SI conversion factors of clinical laboratories (the SI unit tables of the AMA
# Manual of Style; Young DS, "Implementation of SI units for clinical laboratory data",
# Ann Intern Med 1987), written in the form they are usually quoted in the comments.
_ANALYTE_MMOL_PER_MGDL: dict[str, float] = {
    "glucose": 1 / 18.0,  # mg/dL / 18.0 = mmol/L
    "creatinine": 0.0884,  # mg/dL x 88.4 = µmol/L
    "cholesterol": 1 / 38.67,  # total, LDL and HDL cholesterol: mg/dL / 38.67 = mmol/L
    "triglycerides": 1 / 88.57,  # mg/dL / 88.57 = mmol/L
    "urea_nitrogen": 0.357,  # BUN mg/dL x 0.357 = urea mmol/L
    "calcium": 0.2495,  # mg/dL x 0.2495 = mmol/L
    "magnesium": 0.4114,  # mg/dL x 0.4114 = mmol/L
    "phosphate": 0.3229,  # phosphorus mg/dL x 0.3229 = mmol/L
    "bilirubin": 0.0171,  # mg/dL x 17.1 = µmol/L
    "uric_acid": 0.05948,  # mg/dL x 59.48 = µmol/L
    "lactate": 0.111,  # mg/dL x 0.111 = mmol/L
    "hemoglobin": 0.0006206,  # g/dL x 0.6206 = mmol/L (hemoglobin monomer)
    "iron": 0.1791,  # µg/dL x 0.1791 = µmol/L
    "vitamin_d": 0.02496,  # 25-hydroxyvitamin D ng/mL x 2.496 = nmol/L
    "vitamin_b12": 0.007378,  # pg/mL x 0.7378 = pmol/L
    "folate": 0.02266,  # ng/mL x 2.266 = nmol/L
    "thyroxine": 0.01287,  # (free) T4 ng/dL x 12.87 = pmol/L
    "cortisol": 0.02759,  # µg/dL x 27.59 = nmol/L
    "testosterone": 0.0347,  # ng/dL x 0.0347 = nmol/L
    "ammonia": 0.5872,  # µg/dL x 0.5872 = µmol/L
    "ethanol": 0.2171,  # mg/dL x 0.2171 = mmol/L
}
# HbA1c as NGSP/DCCT percent and as IFCC mmol/mol (the IFCC-NGSP master equation,
# NGSP % = 0.09148 x IFCC + 2.152): an offset as well as a factor.
_A1C_SLOPE, _A1C_OFFSET = 0.09148, 2.152
# The words (normalised tokens) that name each analyte; the nearest before a value wins.
_ANALYTE_WORDS: dict[str, str] = {
    "glucose": "glucose",
    "sugar": "glucose",
    "fbg": "glucose",
    "fpg": "glucose",
    "creatinine": "creatinine",
    "cr": "creatinine",
    "scr": "creatinine",
    "cholesterol": "cholesterol",
    "ldl": "cholesterol",
    "hdl": "cholesterol",
    "triglycerides": "triglycerides",
    "triglyceride": "triglycerides",
    "tg": "triglycerides",
    "bun": "urea_nitrogen",
    "urea": "urea_nitrogen",
    "calcium": "calcium",
    "ca": "calcium",
    "magnesium": "magnesium",
    "phosphorus": "phosphate",
    "phosphate": "phosphate",
    "bilirubin": "bilirubin",
    "tbili": "bilirubin",
    "uric acid": "uric_acid",
    "urate": "uric_acid",
    "lactate": "lactate",
    "lactic acid": "lactate",
    "hemoglobin": "hemoglobin",
    "hb": "hemoglobin",
    "iron": "iron",
    "vitamin d": "vitamin_d",
    "vitamin_d": "vitamin_d",
    "hydroxyvitamin d": "vitamin_d",
    "25 oh d": "vitamin_d",
    "b12": "vitamin_b12",
    "cobalamin": "vitamin_b12",
    "folate": "folate",
    "folic acid": "folate",
    "ft4": "thyroxine",
    "t4": "thyroxine",
    "thyroxine": "thyroxine",
    "cortisol": "cortisol",
    "testosterone": "testosterone",
    "ammonia": "ammonia",
    "ethanol": "ethanol",
    "alcohol": "ethanol",
    "hemoglobin_a1c": "hemoglobin_a1c",
}
# Words after which a bare number or "degrees" is a body temperature ("temp 38.5", "T
# 101.3", "fever to 39", "Tmax 102 degrees"), as normalised ("temp", "tmax" ->
# "temperature", "febrile", "pyrexia" -> "fever").
_TEMPERATURE_CUES = frozenset(
    {"temperature", "fever", "afebrile", "febrile", "t", "hyperthermia", "hypothermia", "hyperpyrexia"}
)
# Plausible readings of a number written without a scale ("38.5", "101.3 degrees").
_FAHRENHEIT_RANGE, _CELSIUS_RANGE = (86.0, 113.0), (25.0, 45.0)

# "7 out of 10", "7/10": a rating; "on a scale of 1 to 10" only defines the scale.
_SCORE_RE = re.compile(r"\b(\d{1,2})\s*(?:out\s+of|/)\s*10\b")
_SCALE_RE = re.compile(r"\bscale\s+(?:of|from)\s+\d+\s*(?:-|to)\s*\d+\b")
_AGE_RE = re.compile(
    r"\b(\d{1,3})(?:\s*|-)(?:year|yr)s?(?:\s*|-)old\b|\b(\d{1,3})\s*(?:yo|y/o|y\.o\.)\b|\baged?\s+(\d{1,3})\b"
    r"|\b(?:died|passed away|deceased|diagnosed|started|began|stopped|quit|retired|married)\s+at\s+"
    r"(?:the\s+)?(?:age\s+(?:of\s+)?)?(\d{1,3})\b"
)
_YOUNG_AGE_RE = re.compile(r"\b(\d{1,3})(?:\s*|-)(month|week|day)s?(?:\s*|-)old\b")
# "in his 70s", "in her late sixties", "mid-40s": an age range.
_DECADE_WORDS = {
    "twenties": 20,
    "thirties": 30,
    "forties": 40,
    "fifties": 50,
    "sixties": 60,
    "seventies": 70,
    "eighties": 80,
    "nineties": 90,
}
_DECADE_RE = re.compile(
    r"\b(?:in\s+(?:his|her|their|the|my|your)\s+)?(?P<part>early|mid|late)?[\s-]*"
    r"(?:(?P<num>[2-9]0)'?s|(?P<word>twenties|thirties|forties|fifties|sixties|seventies|eighties|nineties))\b"
)
_YEAR_RE = re.compile(r"\b(19[5-9]\d|20[0-4]\d)\b")
_MONTHS = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "may": 5,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
_MONTH_RE = re.compile(
    r"\b(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?(?:\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?)?"
    r"(?:,?\s+(?P<year>(?:19|20)\d{2}))?\b"
)
_NUMERIC_DATE_RE = re.compile(r"\b(?P<m>\d{1,2})/(?P<d>\d{1,2})/(?P<y>\d{2}|\d{4})\b")
_WEEKDAY_RE = re.compile(r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b")
_FREQUENCIES = {
    "once_daily": 1.0,
    "twice_daily": 2.0,
    "three_times_daily": 3.0,
    "four_times_daily": 4.0,
    "six_times_daily": 6.0,
    "eight_times_daily": 8.0,
    "twelve_times_daily": 12.0,
    "nightly": 1.0,
    "weekly": 1 / 7,
    "prn": -1.0,
    "every_other_day": 0.5,
}
_SIDE_WORDS = {
    "left": "left",
    "right": "right",
    "bilateral": "bilateral",
    "bilaterally": "bilateral",
    "both": "bilateral",
    "l": "left",
    "r": "right",
}


def _same_unit(a: Quantity, b: Quantity) -> bool:
    """Whether two quantities were written in the same unit (their values and raw numbers
    stand in the same ratio; temperatures on the same scale)."""
    if a.dimension == "temperature" or b.dimension == "temperature":
        return a.unit == b.unit
    if not a.raw or not b.raw or not a.raw[0] or not b.raw[0]:
        return True
    return abs(a.values[0] / a.raw[0] - b.values[0] / b.raw[0]) <= 1e-9 * max(1.0, a.values[0] / a.raw[0])


def _converted(
    q: Quantity, dimension: str, analyte: str | None
) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """``q``'s values (and precisions) in ``dimension``, through its analyte's conversion
    (mg/dL and mmol/L of glucose, % and mmol/mol of HbA1c); ``None`` when there is none."""
    if analyte is None or q.analyte != analyte:
        return None
    pair = (q.dimension, dimension)
    factor = _ANALYTE_MMOL_PER_MGDL.get(analyte)
    if factor is not None and pair in (("conc_mgdl", "conc_mmol"), ("conc_mmol", "conc_mgdl")):
        scale = factor if pair[0] == "conc_mgdl" else 1 / factor
        return tuple(v * scale for v in q.values), tuple(p * scale for p in q.precision)
    if analyte == "hemoglobin_a1c" and pair == ("mmol_per_mol", "percent"):
        return (
            tuple(v * _A1C_SLOPE + _A1C_OFFSET for v in q.values),
            tuple(p * _A1C_SLOPE for p in q.precision),
        )
    if analyte == "hemoglobin_a1c" and pair == ("percent", "mmol_per_mol"):
        return (
            tuple((v - _A1C_OFFSET) / _A1C_SLOPE for v in q.values),
            tuple(p / _A1C_SLOPE for p in q.precision),
        )
    return None


# Rounding allowed between two values written in other units: the conversion factor may be
# quoted to fewer digits (2.2 lb/kg, 18 for glucose), within 2 %; and either value may be
# rounded to the digits it shows ("101 °F" for 38.5 °C), up to 5 % of the value. A
# temperature scale is exact: there the digits count, and a tenth of a degree Celsius of
# double rounding ("38.9 °C (102.2 °F)", where 102.2 °F is 39.0 °C).
_CONVERSION_SLACK = 0.02
_ROUNDING_CAP = 0.05
_TEMPERATURE_SLACK = 0.1


def _agree(a: float, b: float, ha: float, hb: float, *, exact_scale: bool) -> bool:
    slack = _TEMPERATURE_SLACK if exact_scale else _CONVERSION_SLACK * max(abs(a), abs(b))
    if not exact_scale:
        ha, hb = min(ha, _ROUNDING_CAP * abs(a)), min(hb, _ROUNDING_CAP * abs(b))
    return abs(a - b) <= max(slack, ha, hb) + 1e-9 * max(1.0, abs(a), abs(b))


@dataclass(frozen=True)
class Quantity:
    """A number with its unit, normalised: ``values`` in the base unit of ``dimension``
    (a temperature in degrees Celsius)."""

    dimension: str
    values: tuple[float, ...]
    text: str
    start: int
    anchor: frozenset[str] = field(default_factory=frozenset)
    raw: tuple[float, ...] = ()
    """The numbers as written (before unit conversion)."""
    vague: bool = False
    """A duration without a number ("a few days", "several weeks"): ``values`` is the
    range it stands for, which agrees with any value or range inside it."""
    bound: str | None = None
    """A limit rather than a value: ``upper`` ("up to 72 hours", "no more than 4 g") or
    ``lower`` ("more than 3 days", "at least 4")."""
    unit: str = ""
    """The unit as written, lower case ("mg/dl"); for a temperature its scale, ``f`` or
    ``c``. Empty for a bare number."""
    precision: tuple[float, ...] = ()
    """Half a unit of the last digit written of each value, in the base unit ("38.5 °C":
    0.05; "101 °F": 0.28): how far rounding may have moved it."""
    analyte: str | None = None
    """The laboratory analyte the value measures, when a known one is named just before it
    ("glucose", "creatinine", "hemoglobin_a1c"): it decides conversions between mg/dL
    and mmol/L, which depend on the analyte."""

    def comparable(self, other: Quantity) -> bool:
        """Same dimension; or one side a bare number (compared as written) and the other a
        dose, percentage, lab value or temperature ("A1c 8" and "A1c 8%"), not a duration
        or an age; or the same analyte in units its conversion links ("glucose 10 mmol/L"
        and "glucose 180 mg/dL"; not an analyte without a known conversion)."""
        if self.dimension == other.dimension:
            return True
        if "number" not in (self.dimension, other.dimension):
            return _converted(other, self.dimension, self.analyte) is not None
        unit = other.dimension if self.dimension == "number" else self.dimension
        return unit in _BARE_COMPARABLE

    def same_value(self, other: Quantity) -> bool:
        """The same value, or ranges that agree. In the same unit the numbers must be equal;
        durations in other units agree within 10 %; other units within the rounding of a
        conversion (see :func:`_agree`): "101.3 °F" is "38.5 °C", "154 lb" is "70 kg",
        "glucose 10 mmol/L" is "glucose 180 mg/dL", but "39.5 °C" is not "38.5 °C" and
        "0.5 mg" is not "5 mg". A bare number is compared as written, and as thousands
        per microlitre against a cell count ("platelets 150" / "150,000/µL")."""
        if (self.vague or other.vague) and self.dimension == other.dimension:
            # "a few days" agrees with "2-3 days" and with "several days", not with "3 weeks".
            (low, high), values = (self.values, other.values) if self.vague else (other.values, self.values)
            if self.vague and other.vague:
                return not (other.values[1] < low or other.values[0] > high)
            return all(low - 1e-9 <= v <= high + 1e-9 for v in values)
        mine_precision: tuple[float, ...] = self.precision
        theirs_precision: tuple[float, ...] = other.precision
        bare = "number" in (self.dimension, other.dimension) and self.dimension != other.dimension
        if self.dimension == other.dimension:
            mine, theirs = self.values, other.values
        elif bare:
            mine, theirs = self.raw or self.values, other.raw or other.values
            if "count_ul" in (self.dimension, other.dimension) and len(mine) == len(theirs) == 1:
                # "platelets 150": thousands per microlitre, as counts are reported
                count, number = (self, other) if self.dimension == "count_ul" else (other, self)
                if abs(number.values[0] * 1000 - count.values[0]) <= 1e-9 * max(1.0, count.values[0]):
                    return True
        else:
            converted = _converted(other, self.dimension, self.analyte)
            if converted is None:
                return False
            mine, (theirs, theirs_precision) = self.values, converted
        if len(mine) != len(theirs):
            # One value against a range ("4 hours" / "4 to 72 hours"): consistent when inside it.
            if self.dimension != "pressure" and {len(mine), len(theirs)} == {1, 2}:
                value, (low, high) = (mine[0], theirs) if len(mine) == 1 else (theirs[0], mine)
                return min(low, high) - 1e-9 <= value <= max(low, high) + 1e-9
            return False
        if bare:
            # as written; within 2 % (a bare number's unit is unknown)
            return all(
                abs(a - b) <= _CONVERSION_SLACK * max(abs(a), abs(b)) + 1e-9
                for a, b in zip(mine, theirs, strict=True)
            )
        if self.dimension == other.dimension and _same_unit(self, other):
            # in the same unit, the same number
            return all(
                abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b)) for a, b in zip(mine, theirs, strict=True)
            )
        if self.dimension in ("time", "age"):
            # Durations in other units are as exact as the calendar: "12 months" is "1 year",
            # "8 weeks" is "2 months" (within 10 %).
            return all(
                abs(a - b) <= 0.1 * max(1.0, abs(a), abs(b)) for a, b in zip(mine, theirs, strict=True)
            )
        exact_scale = self.dimension == "temperature"
        return all(
            _agree(a, b, ha, hb, exact_scale=exact_scale)
            for a, b, ha, hb in zip(
                mine,
                theirs,
                _padded(mine_precision, len(mine)),
                _padded(theirs_precision, len(theirs)),
                strict=True,
            )
        )

    def key(self) -> str:
        """A term standing for this quantity in coverage ("q:mass:0.02")."""
        return "q:" + self.dimension + ":" + "/".join(f"{v:.6g}" for v in self.values)


def _padded(precision: tuple[float, ...], n: int) -> tuple[float, ...]:
    return precision if len(precision) == n else (0.0,) * n


@dataclass(frozen=True)
class DateMention:
    """A calendar date or year; missing parts are ``None``."""

    year: int | None
    month: int | None
    day: int | None
    text: str
    start: int

    def conflicts(self, other: DateMention) -> bool:
        """Some part both dates give (year, month or day) differs."""
        pairs = ((self.year, other.year), (self.month, other.month), (self.day, other.day))
        return any(a is not None and b is not None and a != b for a, b in pairs)


@dataclass(frozen=True)
class SideMention:
    """A laterality word and the body site it qualifies ("left" + "knee")."""

    side: str
    site: str
    start: int
    anatomical: bool = True
    """``site`` is a body-site word (else only the next content word)."""
    context: frozenset[str] = frozenset()
    """The content words right after the side word (and the site), for mentions without a
    body-site word: "left apical pneumothorax" -> {apic, pneumothorax}."""

    def same_site(self, other: SideMention) -> bool:
        from clineval.nlp.terms import terms_match

        if self.anatomical and other.anatomical:
            return terms_match(self.site, other.site)
        mine, theirs = self.context | {self.site}, other.context | {other.site}
        return any(terms_match(a, b) for a in mine for b in theirs)


# Words that compare or order ("more than 3 days", "after 2 weeks"): they say how a number
# relates, not what it measures, so they never anchor it.
_COMPARING = frozenset(
    {"more", "less", "fewer", "greater", "before", "after", "least", "most", "over", "under"}
)


_UPPER_BOUND = re.compile(
    r"(?:\b(?:less|fewer|shorter|lower|earlier)\s+than|\bunder|\bup\s+to|\bat\s+most|\bmaximum(?:\s+of)?"
    r"|\b(?:no|not|never)\s+(?:\w+\s+){0,2}(?:more|longer|greater|higher)\s+than|\bexceed|[<≤]=?)\s*$"
)
_LOWER_BOUND = re.compile(
    r"(?:\b(?:more|greater|longer|higher|later)\s+than|\bover|\bat\s+least|\bbeyond|\bexceeding|\bminimum"
    r"(?:\s+of)?|[>≥]=?)\s*$"
)


def _bound(before: str) -> str | None:
    """Whether the number after ``before`` is a limit, and which."""
    if _UPPER_BOUND.search(before):
        return "upper"
    if _LOWER_BOUND.search(before):
        return "lower"
    return None


def _anchor(normalized: str, start: int, end: int) -> frozenset[str]:
    """Content stems up to 4 words before a quantity (within its clause) and 2 after."""
    before = normalized[:start]
    cut = max(before.rfind(c) for c in ";:.,(")
    before_tokens = [t for t in tokenize(before[cut + 1 :]) if t.kind == "word" and not is_stopword(t)]
    after = normalized[end:]
    stop = min((i for i in (after.find(c) for c in ";:.,(") if i >= 0), default=len(after))
    after_tokens = [t for t in tokenize(after[:stop]) if t.kind == "word" and not is_stopword(t)]
    words = [t.stem for t in before_tokens[-4:]] + [t.stem for t in after_tokens[:2]]
    return frozenset(w for w in words if w not in _UNITS and w not in _FREQUENCIES and w not in _COMPARING)


_VAGUE_DURATION_RE = re.compile(
    r"\b(?P<how>a\s+few|few|several|a\s+couple\s+of|couple\s+of)\s+"
    r"(?P<unit>minutes|hours|days|weeks|months|years)\b"
)


def extract_quantities(normalized: str) -> list[Quantity]:
    """Numbers with units (and bare numbers with an anchor), ages, blood pressures."""
    found: list[Quantity] = []
    taken: list[tuple[int, int]] = []
    for match in _YOUNG_AGE_RE.finditer(normalized):
        # "a 6-month-old": an age (in years, 0.49), not a duration, so it meets "6-year-old"
        years = round(float(match.group(1)) * _UNITS[match.group(2) + "s"][1] / 365.25, 4)
        found.append(
            Quantity(
                "age", (years,), match.group(0), match.start(), frozenset({"age"}), (float(match.group(1)),)
            )
        )
        taken.append(match.span())
    for match in _AGE_RE.finditer(normalized):
        if any(a <= match.start() < b for a, b in taken):
            continue
        value = next(g for g in match.groups() if g)
        found.append(
            Quantity(
                "age", (float(value),), match.group(0), match.start(), frozenset({"age"}), (float(value),)
            )
        )
        taken.append(match.span())
    for match in _DECADE_RE.finditer(normalized):
        if any(a <= match.start() < b for a, b in taken):
            continue
        if match.group("num") is None and match.group("word") is None:
            continue
        if match.group("num") is not None and not re.match(r"in\s", match.group(0).strip()):
            continue  # "the 70s" alone may be a decade of years; ages are "in his 70s"
        base = float(match.group("num") or _DECADE_WORDS[match.group("word")])
        low, high = {"early": (0, 3), "mid": (3, 7), "late": (6, 9), None: (0, 9)}[match.group("part")]
        ages: tuple[float, ...] = (base + low, base + high)
        found.append(Quantity("age", ages, match.group(0).strip(), match.start(), frozenset({"age"}), ages))
        taken.append(match.span())
    for match in _SCORE_RE.finditer(normalized):
        value = float(match.group(1))
        found.append(
            Quantity(
                "score10",
                (value,),
                match.group(0),
                match.start(),
                _anchor(normalized, match.start(), match.end()),
                (value,),
            )
        )
        taken.append(match.span())
    for match in _SCALE_RE.finditer(normalized):
        taken.append(match.span())
    for match in _NUMERIC_DATE_RE.finditer(normalized):
        taken.append(match.span())
    for match in _MONTH_RE.finditer(normalized):
        if match.group("day") or match.group("year"):
            taken.append(match.span())
    for match in _VAGUE_DURATION_RE.finditer(normalized):
        if any(a <= match.start() < b for a, b in taken):
            continue
        factor = _UNITS[match.group("unit")][1]
        least, most = (2.0, 3.0) if "couple" in match.group("how") else (2.0, 6.0)
        found.append(
            Quantity(
                "time",
                (least * factor, most * factor),
                match.group(0),
                match.start(),
                _anchor(normalized, match.start(), match.end()),
                (least, most),
                vague=True,
            )
        )
        taken.append(match.span())
    for match in _QUANTITY_RE.finditer(normalized):
        if any(a <= match.start() < b for a, b in taken):
            continue
        quantity = _quantity(normalized, match)
        if quantity is not None:
            found.append(quantity)
    found.sort(key=lambda q: q.start)
    return found


def _half_unit(number: str) -> float:
    """Half a unit of the last digit written ("38.5": 0.05, "101": 0.5)."""
    return 0.5 * 10.0 ** -len(number.partition(".")[2])


def _quantity(normalized: str, match: re.Match[str]) -> Quantity | None:
    """The quantity of one match of :data:`_QUANTITY_RE`, or ``None`` for a number that is
    not one (a date-like "3/5", a year, a bare number with no anchor)."""
    num, num2, unit = match.group("num"), match.group("num2"), match.group("unit")
    numbers = (num,) if num2 is None else (num, num2)
    end = match.end()
    scale = ""
    factor = 1.0
    if "/" in num:
        parts = tuple(float(p) for p in num.split("/"))
        dimension = (
            "pressure" if unit in (None, "mmhg") and len(parts) == 2 and parts[0] > parts[1] else "ratio"
        )
        if len(parts) == 2 and parts[0] <= 12 and parts[1] <= 31 and dimension == "ratio":
            return None  # "3/5" is more likely a date or a score than a measurement
        values = raw = parts
        numbers = tuple(num.split("/"))
    else:
        values = raw = tuple(float(n) for n in numbers)
        if match.group("sci") is not None:
            exponent = (match.group("exp") or match.group("exp2") or match.group("exp3")).translate(
                _SUPERSCRIPTS
            )
            dimension, unit = "count_ul", match.group("sci").replace(" ", "")
            factor = 10.0 ** int(exponent) * (1e-6 if match.group("per") == "l" else 1.0)
        elif unit is not None:
            dimension, factor = _UNITS[unit]
        else:
            dimension = "number"
        if dimension in ("temperature", "degrees", "number"):
            scale = _temperature_scale(normalized, match.start(), unit, values)
            if scale:
                dimension = "temperature"
            elif unit in ("f", "c"):
                # a letter that is no temperature scale here: the number stands alone
                unit, dimension = None, "number"
                end = match.end("num2") if num2 is not None else match.end("num")
        if _YEAR_RE.fullmatch(num) and dimension == "number":
            return None  # years are dates, handled by extract_dates
        if scale == "f":
            values = tuple((v - 32.0) * 5.0 / 9.0 for v in values)
            factor = 5.0 / 9.0
        elif dimension != "temperature":
            values = tuple(v * factor for v in values)
    anchor = _anchor(normalized, match.start(), end)
    if dimension == "number" and not anchor:
        return None
    return Quantity(
        dimension,
        values,
        normalized[match.start() : end].strip(),
        match.start(),
        anchor,
        raw,
        bound=_bound(normalized[: match.start()]),
        unit=scale or unit or "",
        precision=tuple(_half_unit(n) * factor for n in numbers),
        analyte=_analyte(normalized, match.start(), end),
    )


_FAHRENHEIT_UNITS = frozenset(
    u for u in _UNITS if u.endswith(("f", "fahrenheit")) and _UNITS[u][0] == "temperature"
)
_CELSIUS_UNITS = frozenset(u for u in _UNITS if _UNITS[u][0] == "temperature") - _FAHRENHEIT_UNITS


def _temperature_scale(normalized: str, start: int, unit: str | None, values: tuple[float, ...]) -> str:
    """``f`` or ``c`` when the number at ``start`` is a temperature on that scale, else "".

    A scale named in full ("degrees F", "°C", "Celsius") is one. A bare letter ("38.5C",
    "101.3 F") is one after a temperature word or in the range of a body temperature;
    "degrees" alone, and a number without a unit, only after a temperature word ("temp
    38.5", "T 101.3", "fever to 39 degrees"), on the scale its value fits."""
    cue = _after_temperature_cue(normalized, start)
    if unit in ("f", "c"):
        low, high = _FAHRENHEIT_RANGE if unit == "f" else _CELSIUS_RANGE
        return unit if cue or all(low <= v <= high for v in values) else ""
    if unit in _FAHRENHEIT_UNITS:
        return "f"
    if unit in _CELSIUS_UNITS:
        return "c"
    if not cue:
        return ""
    if all(_FAHRENHEIT_RANGE[0] <= v <= _FAHRENHEIT_RANGE[1] for v in values):
        return "f"
    if all(_CELSIUS_RANGE[0] <= v <= _CELSIUS_RANGE[1] for v in values):
        return "c"
    return ""


def _after_temperature_cue(normalized: str, start: int) -> bool:
    """The nearest word before ``start`` (past stopwords and ":" or ",") names a body
    temperature ("temperature", "fever", "T")."""
    for token in reversed(tokenize(normalized[max(0, start - 60) : start])):
        if token.kind == "word" and token.text in _TEMPERATURE_CUES:
            return True
        if token.kind == "punct" and token.text in ":,":
            continue
        if token.kind == "word" and (is_stopword(token) or token.text in ("max", "maximum", "peak", "oral")):
            continue
        return False
    return False


_ANALYTE_RE = re.compile(
    r"(?<![\w-])(?:"
    + "|".join(re.escape(w) for w in sorted(_ANALYTE_WORDS, key=len, reverse=True))
    + r")(?![\w-])"
)


def _analyte(normalized: str, start: int, end: int) -> str | None:
    """The analyte named nearest before a value in its sentence (within 60 characters and
    not past ";" or "."), else right after it (within 20 characters)."""
    before = normalized[max(0, start - 60) : start]
    cut = max(before.rfind(";"), before.rfind(". "))
    hits = list(_ANALYTE_RE.finditer(before[cut + 1 :]))
    if hits:
        return _ANALYTE_WORDS[hits[-1].group(0)]
    after = normalized[end : end + 20]
    after = re.split(r"[;,.(]", after, maxsplit=1)[0]
    hit = _ANALYTE_RE.search(after)
    return _ANALYTE_WORDS[hit.group(0)] if hit else None


def extract_frequencies(normalized: str) -> list[tuple[str, float, frozenset[str]]]:
    """Dosing frequencies (``twice_daily`` ...) with times per day and anchor words."""
    out: list[tuple[str, float, frozenset[str]]] = []
    for match in re.finditer(r"\b(" + "|".join(_FREQUENCIES) + r")\b", normalized):
        out.append(
            (match.group(1), _FREQUENCIES[match.group(1)], _anchor(normalized, match.start(), match.end()))
        )
    return out


def extract_dates(normalized: str) -> list[DateMention]:
    """Calendar dates ("march 3, 2021", "3/5/2021") and bare years ("in 2019")."""
    out: list[DateMention] = []
    spans: list[tuple[int, int]] = []
    for match in _NUMERIC_DATE_RE.finditer(normalized):
        year = int(match.group("y"))
        year = year + 2000 if year < 100 and year < 50 else (year + 1900 if year < 100 else year)
        month, day = int(match.group("m")), int(match.group("d"))
        if 1 <= month <= 12 and 1 <= day <= 31:
            out.append(DateMention(year, month, day, match.group(0), match.start()))
            spans.append(match.span())
    for match in _MONTH_RE.finditer(normalized):
        word = match.group("month")
        if word == "may" and not (match.group("day") or match.group("year")):
            continue  # "may" the verb
        if word in ("mar", "jun", "jul", "sep", "oct", "nov", "dec", "jan", "feb", "apr", "aug") and not (
            match.group("day") or match.group("year")
        ):
            continue
        day_of_month = int(match.group("day")) if match.group("day") else None
        if day_of_month is not None and not 1 <= day_of_month <= 31:
            day_of_month = None
        year_given = int(match.group("year")) if match.group("year") else None
        out.append(DateMention(year_given, _MONTHS[word[:3]], day_of_month, match.group(0), match.start()))
        spans.append(match.span())
    for match in _YEAR_RE.finditer(normalized):
        if any(a <= match.start() < b for a, b in spans):
            continue
        out.append(DateMention(int(match.group(1)), None, None, match.group(0), match.start()))
    out.sort(key=lambda d: d.start)
    return out


def extract_weekdays(normalized: str) -> list[str]:
    return [m.group(1) for m in _WEEKDAY_RE.finditer(normalized)]


def extract_sides(normalized: str) -> list[SideMention]:
    """Laterality words with the body site they qualify (the next site word within 4
    tokens, else the previous one; else the next content word)."""
    tokens = tokenize(normalized)
    out: list[SideMention] = []
    for i, token in enumerate(tokens):
        side = _SIDE_WORDS.get(token.text)
        if side is None:
            continue
        if token.text in ("l", "r") and not (i + 1 < len(tokens) and tokens[i + 1].text in BODY_SITES):
            continue
        if token.text == "both" and not (
            i + 1 < len(tokens) and tokens[i + 1].text in BODY_SITES | {"side", "sides"}
        ):
            continue
        site = ""
        anatomical = True
        context: set[str] = set()
        for t in tokens[i + 1 : i + 5]:
            if t.kind == "punct" and t.text in ";.,":
                break
            if t.kind == "word" and not is_stopword(t) and t.text not in _SIDE_WORDS and len(context) < 3:
                context.add(t.stem)
            if not site and t.text in BODY_SITES and t.text not in ("upper", "lower", "side"):
                site = t.stem
        if not site and token.text == "bilaterally":
            for t in reversed(tokens[max(0, i - 4) : i]):
                if t.text in BODY_SITES or (t.kind == "word" and not is_stopword(t)):
                    site = t.stem
                    break
        if not site:
            anatomical = False
            for t in tokens[i + 1 : i + 4]:
                if t.kind == "punct" and t.text in ";.,":
                    break
                if t.text in ("side", "sides", "sided"):
                    continue  # "on the right side": what it qualifies comes before
                if t.kind == "word" and not is_stopword(t) and t.text not in _SIDE_WORDS:
                    site = t.stem
                    break
        if not site:
            # A side after what it qualifies ("pneumothorax on the right", "pain, left side"):
            # the nearest body-site word before it in the clause, else the content words there.
            before: list[Token] = []
            for t in reversed(tokens[max(0, i - 6) : i]):
                if t.kind == "punct" and t.text in ";.":
                    break
                if t.kind == "word" and not is_stopword(t) and t.text not in _SIDE_WORDS:
                    before.append(t)
            sites = [t for t in before if t.text in BODY_SITES and t.text not in ("upper", "lower", "side")]
            if sites:
                site, anatomical = sites[0].stem, True
            elif before:
                site = before[0].stem
                context = {t.stem for t in before[:3]}
        if site:
            out.append(SideMention(side, site, token.start, anatomical, frozenset(context)))
    return out


def drug_role(name: str) -> str | None:
    """The coarse role of a known drug ("antihypertensive"), else ``None``."""
    return DRUG_ROLE.get(name)


def is_drug(word: str) -> bool:
    """A known drug, a drug-class word, or a word with a drug-name suffix."""
    if word in DRUG_ROLE or word in DRUG_CLASS_WORDS:
        return True
    return len(word) >= 7 and word.isalpha() and word.endswith(DRUG_SUFFIXES) and word not in _NOT_DRUGS


_NOT_DRUGS = frozenset(
    [
        "question",
        "questions",
        "condition",
        "position",
        "medicine",
        "medicine",
        "routine",
        "machine",
        "vaccine",
        "done",
        "someone",
        "everyone",
        "anyone",
        "bone",
        "none",
        "phone",
        "alone",
        "ozone",
        "hormone",
        "cortisone",
        "examine",
        "combine",
        "decline",
        "online",
        "ultrasound",
        "background",
        "spine",
        "pine",
        "supine",
        "saline",
        "bedtime",
        "daytime",
        "baseline",
        "guideline",
        "outline",
        "underline",
        "timeline",
        "hotline",
        "discipline",
        "famine",
        "intestine",
        "uterine",
        "urine",
        "alkaline",
        "decline",
    ]
)


def find_drugs(normalized: str) -> list[tuple[str, int]]:
    """Known or suffix-recognised drug names in a normalised text, with their offsets."""
    out: list[tuple[str, int]] = []
    for token in tokenize(normalized):
        if token.kind == "word" and (
            token.text in DRUG_ROLE or (token.text not in DRUG_CLASS_WORDS and is_drug(token.text))
        ):
            out.append((token.text, token.start))
    return out
