"""Former home of the per-sample records, now defined in :mod:`aieval.core`.

Kept so that existing imports, and objects pickled by reference to this module, still resolve.
"""

from aieval.core import CallRecord, SampleRecord, ScoreRecord, redact_record

__all__ = ["CallRecord", "SampleRecord", "ScoreRecord", "redact_record"]
