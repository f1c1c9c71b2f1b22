"""Datasets: rows from lists, JSONL, JSON, CSV or Hugging Face ``datasets``, streamed and hashed."""

from aieval.datasets._dataset import Dataset, DatasetInfo, load_dataset
from aieval.datasets._rows import RowSpec

__all__ = ["Dataset", "DatasetInfo", "RowSpec", "load_dataset"]
