"""The comment's budget is the whole comment's: however many runs, and however long each run's
section would be, the body stays within GitHub's 65,536 characters and says what it cut."""

from __future__ import annotations

import pytest

from aieval.ci._comment import MIN_SECTION, Section, compose
from aieval.errors import ConfigError
from aieval.report import COMMENT_LIMIT

LEAD = "<!-- aieval:github-comment:aieval -->\n\n## ❌ aieval: blocked (the check fails)"
FOOTER = "<sub>aieval 0.1.0</sub>"
HEADER = "| eval | model | decision | baseline | candidate |\n| :--- | :--- | :--- | :--- | :--- |"


def _greedy(i: int) -> Section:
    """A run whose section fills whatever it is given, and overshoots it a little (as a
    renderer counting loosely does)."""

    def render(limit: int) -> str:
        return f"### run {i}\n\n" + "r" * (limit + 100)

    return Section(f"### ❌ run {i}", f"`aieval compare base-{i} cand-{i}`", render)


def _refusing(i: int) -> Section:
    def render(limit: int) -> str:
        raise ConfigError(f"a GitHub comment of at most {limit} characters cannot hold this one")

    return Section(f"### ❔ run {i}", f"`aieval compare base-{i} cand-{i}`", render)


@pytest.mark.parametrize("runs", [1, 2, 3, 40, 300, 5_000])
def test_any_number_of_full_sections_fits_in_one_comment(runs: int) -> None:
    sections = [_refusing(i) if i % 3 == 2 else _greedy(i) for i in range(runs)]
    rows = [f"| eval-{i} | model-{i} | ❌ blocked | base-{i} | cand-{i} |" for i in range(runs)]
    table = (HEADER, rows) if runs > 1 else None
    body, shown = compose(LEAD, table, sections, FOOTER)
    assert len(body) <= COMMENT_LIMIT
    assert body.startswith(LEAD) and body.rstrip().endswith(FOOTER)
    assert len(shown) == runs
    if runs <= 3:  # a few runs share the room, each within its share
        assert all(text for text in shown)
        assert len(body) > COMMENT_LIMIT - 6_000  # the room is used
    if runs == 3:
        assert shown[1].startswith("### run 1") and len(shown[1]) > MIN_SECTION
        assert shown[2] == "### ❔ run 2\n\n`aieval compare base-2 cand-2`"  # compact form
    if runs == 300:  # too many for full sections: every one compact, none left out
        assert all(text.endswith(f"cand-{i}`") for i, text in enumerate(shown))
    if runs == 5_000:  # the first ones compact, the rest counted
        assert shown[0] == "### ❌ run 0\n\n`aieval compare base-0 cand-0`"
        left_out = sum(1 for text in shown if not text)
        assert left_out and f"_{left_out:,} more runs left out" in body
        assert "more runs not listed to keep the comment under GitHub's size limit" in body


def test_a_short_section_leaves_its_room_to_the_next() -> None:
    short = Section("### ✅ short", "-", lambda limit: "### ✅ short\n\nall good")
    body, shown = compose(LEAD, None, [short, _greedy(1)], FOOTER)
    assert shown[0] == "### ✅ short\n\nall good"
    assert len(shown[1]) > COMMENT_LIMIT - 2_000 and len(body) <= COMMENT_LIMIT
