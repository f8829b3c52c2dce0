"""Datasets: files, DataFrames and lists of dicts as validated cases."""

from clineval.datasets.dataset import Dataset, fingerprint_cases
from clineval.datasets.loaders import KNOWN_ALIASES, load_dataset

__all__ = ["KNOWN_ALIASES", "Dataset", "fingerprint_cases", "load_dataset"]
