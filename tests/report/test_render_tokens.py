"""Every rendering of a report shows a token total some calls did not report as unknown:
``at least N (k of M calls unreported)``, never the partial sum as the total."""

from __future__ import annotations

import re
from typing import Any

import pytest
from tests.support.reports import ungraded_report

from aieval._usage_figures import TokenTotal
from aieval.report import render_html, render_markdown, render_text

TARGET = TokenTotal(input=1200, output=300, calls=10, unreported=2)
JUDGES = TokenTotal(input=900, output=40, calls=5)


def _report(target: TokenTotal = TARGET, judges: TokenTotal = JUDGES) -> dict[str, Any]:
    tokens = (target + judges).to_dict() | {
        "target": target.to_dict(),
        "judges": judges.to_dict(),
    }
    return ungraded_report() | {"tokens": tokens}


def _plain(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


RENDERERS = [
    pytest.param(lambda doc: render_text(doc, width=400), id="text"),
    pytest.param(render_markdown, id="markdown"),
    pytest.param(lambda doc: _plain(render_html(doc)), id="html"),
]


@pytest.mark.parametrize("render", RENDERERS)
def test_an_incomplete_token_total_reads_at_least(render: Any) -> None:
    out = " ".join(render(_report()).split())
    assert "target at least 1200/300 (2 of 10 calls unreported)" in out
    assert "judges 900/40" in out
    assert "total at least 2100/340 (2 of 15 calls unreported)" in out


@pytest.mark.parametrize("render", RENDERERS)
def test_a_total_no_call_reported_reads_unknown(render: Any) -> None:
    doc = _report(TokenTotal(calls=3, unreported=3), TokenTotal())
    doc |= {"latency": dict.fromkeys(doc["latency"]), "cost": None}
    out = " ".join(render(doc).split())
    assert "target unknown (3 of 3 calls unreported)" in out
    assert "total unknown (3 of 3 calls unreported)" in out
