"""A local verifier model as a judge (``--judge nli:PATH``; see docs/judges.md).

The offline judge answers every primitive, and a local NLI or fact-checking cross-encoder
(an ONNX export run by onnxruntime, or a transformers folder) checks each claim against the
evidence beside the offline judge's own checks (:mod:`clineval.judges.nli.judge`). Loading and
prediction are in :mod:`clineval.judges.nli.model`; onnxruntime, transformers and torch are
imported only when a model is loaded.
"""

from clineval.judges.nli.judge import NLI_VERSION, NliJudge, NliPrimitives, NliThresholds, combine
from clineval.judges.nli.model import EntailmentModel, LabelLayout, Probabilities, label_layout, load_model

__all__ = [
    "NLI_VERSION",
    "EntailmentModel",
    "LabelLayout",
    "NliJudge",
    "NliPrimitives",
    "NliThresholds",
    "Probabilities",
    "combine",
    "label_layout",
    "load_model",
]
