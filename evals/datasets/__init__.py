"""Datasets: the `Problem` type, loaders for the ReSo release format, the GSM8K replay file and plain
JSONL, and a registry of named datasets."""

from reso.evals.datasets.problem import DatasetError, Problem
from reso.evals.datasets.registry import list_datasets, load_dataset, register_dataset, resolve_data_root

__all__ = ["DatasetError", "Problem", "list_datasets", "load_dataset", "register_dataset", "resolve_data_root"]
