"""Calibration: how far a judge agrees with clinicians, beside trivial baselines.

``clineval calibrate --judge SPEC`` (or :func:`calibrate`) runs any judge on small
human-labelled samples shipped with the package (K-QA, MEDEC, RadFact, MedSafetyBench) and
reports its agreement with the physicians and experts next to the physicians' own
agreement and to trivial baselines (ROUGE-L, content-word share, "the texts differ"), with
95 % intervals and paired intervals of the differences. ``validation/run_validation.py``
runs the same protocols on the full public sets.
"""

from clineval.calibration.data import CalibrationData, load_data, load_samples, select_samples
from clineval.calibration.protocols import Comparison, Figure, ProtocolResult, Stat
from clineval.calibration.runner import PROTOCOLS, CalibrationReport, acalibrate, analyse, calibrate

__all__ = [
    "PROTOCOLS",
    "CalibrationData",
    "CalibrationReport",
    "Comparison",
    "Figure",
    "ProtocolResult",
    "Stat",
    "acalibrate",
    "analyse",
    "calibrate",
    "load_data",
    "load_samples",
    "select_samples",
]
