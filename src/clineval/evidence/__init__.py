"""Evidence views: what a reviewer reads to see why a case scored as it did.

Each metric family registers its view beside the metric (:func:`evidence_view`); the
viewer and the HTML report draw a result with the view chosen for it
(:func:`clineval.evidence.lookup.find_view`) inside a block of their own (value, label,
status). The widgets (:mod:`clineval.evidence.widgets`) and the HTML helpers
(:mod:`clineval.evidence.html`) are what views are built from.
"""

from clineval.evidence.html import Markup, h, join
from clineval.evidence.registry import EvidenceContext, EvidenceView, case_input_view, evidence_view

__all__ = ["EvidenceContext", "EvidenceView", "Markup", "case_input_view", "evidence_view", "h", "join"]
