"""A hand-written, clinically coherent knowledge base for synthetic records (written for clineval).

For each of the 22 anatomy-modality pairs, a few disease scenarios in which the modality
does show the disease for that anatomy: the finding (anomaly part and symptom), an organ
biomarker and an anomaly biomarker with plausible ranges and units, a fitting clinical
indicator (score, grade or stage) with its possible values, report and treatment
templates, demographics, histories and complaints. Records are sampled from these with a
seeded random generator (:mod:`clineval.environments.radbench.records`).

Templates are ``str.format`` strings over: ``{organ}``, ``{organ_dim}``, ``{organ_quant}``,
``{part}``, ``{symptom}``, ``{anomaly_dim}``, ``{anomaly_quant}``, ``{disease}``,
``{indicator}``, ``{indicator_value}``, ``{age}``, ``{sex}`` (lower case).
"""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Quantity:
    """A plausible numeric value: sampled uniformly in [low, high], written with its unit."""

    low: float
    high: float
    unit: str
    decimals: int = 1

    def sample(self, rng: random.Random) -> str:
        value = rng.uniform(self.low, self.high)
        text = f"{value:.{self.decimals}f}" if self.decimals > 0 else str(round(value))
        return (
            f"{text} {self.unit}".strip()
            if self.unit and not self.unit.startswith("%")
            else f"{text}{self.unit}"
        )


@dataclass(frozen=True)
class Scenario:
    """One disease seen on one anatomy-modality pair, with everything a record needs."""

    anatomy: str
    modality: str
    disease: str
    part: str
    """Where the anomaly is (e.g. "right lower lobe")."""
    symptom: str
    """What the anomaly is (e.g. "consolidation"); also the anomaly biomarker's object."""
    organ: str
    organ_dim: str
    organ_quantity: Quantity
    anomaly_dim: str
    anomaly_quantity: Quantity
    indicator: str
    indicator_values: tuple[str, ...]
    finding: str
    impression: str
    treatment: str
    age: tuple[int, int]
    female_share: float
    histories: tuple[str, ...]
    complaints: tuple[str, ...]


def _collect() -> tuple[Scenario, ...]:
    from clineval.environments.radbench.knowledge import (
        abdomen_pelvis,
        breast,
        chest,
        head_neck,
        limb,
        spine,
    )

    found: list[Scenario] = []
    for module in (head_neck, chest, breast, abdomen_pelvis, limb, spine):
        found.extend(module.SCENARIOS)
    return tuple(found)


SCENARIOS: tuple[Scenario, ...] = _collect()


def scenarios_for(anatomy: str, modality: str) -> list[Scenario]:
    """The scenarios of one anatomy-modality pair."""
    return [s for s in SCENARIOS if s.anatomy == anatomy and s.modality == modality]
