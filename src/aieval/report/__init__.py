"""Reports and comparisons of stored runs, rendered for the terminal, JSON, Markdown and HTML.

Renderers take a ``RunReport``, a ``Comparison`` or the ``to_dict()`` data of either, so stored
JSON renders the same way as a fresh report.
"""

from aieval.report._html import render_html
from aieval.report._json import comparison_schema, render_json, report_schema
from aieval.report._markdown import render_markdown
from aieval.report._text import render_text

__all__ = [
    "comparison_schema",
    "render_html",
    "render_json",
    "render_markdown",
    "render_text",
    "report_schema",
]
