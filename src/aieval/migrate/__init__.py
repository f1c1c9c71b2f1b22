"""Bring evaluations over from other tools: ``import_promptfoo`` translates a promptfoo
configuration into an aieval eval file, a dataset with per-row checks, and stubs for what has
no aieval equivalent (see docs/migrating.md); ``import_deepeval`` and
``import_promptfoo_conversations`` translate conversations into scenarios (see
docs/conversations.md)."""

from aieval.migrate._convimport import ConversationImport, Translated
from aieval.migrate._deepeval import import_deepeval
from aieval.migrate._pfasserts import MAPPED_TYPES
from aieval.migrate._pfconversations import import_promptfoo_conversations, is_conversation_config
from aieval.migrate._promptfoo import ImportLine, PromptfooImport, import_promptfoo

__all__ = [
    "MAPPED_TYPES",
    "ConversationImport",
    "ImportLine",
    "PromptfooImport",
    "Translated",
    "import_deepeval",
    "import_promptfoo",
    "import_promptfoo_conversations",
    "is_conversation_config",
]
