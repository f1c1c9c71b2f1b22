"""Bring evaluations over from other tools: ``import_promptfoo`` translates a promptfoo
configuration into an aieval eval file, a dataset with per-row checks, and stubs for what has
no aieval equivalent (see docs/migrating.md)."""

from aieval.migrate._pfasserts import MAPPED_TYPES
from aieval.migrate._promptfoo import ImportLine, PromptfooImport, import_promptfoo

__all__ = ["MAPPED_TYPES", "ImportLine", "PromptfooImport", "import_promptfoo"]
