"""A pairwise judge's tally: the win rate excluding ties, beside the ties that are only flips."""

from __future__ import annotations

from aieval.report._document import pairwise_note
from aieval.report._tally import JudgeTally


def _meta(outcome: str, *, inconsistent: bool = False, adjudicated: bool = False,
          failures: int = 0) -> dict[str, object]:  # fmt: skip
    return {"outcome": outcome, "inconsistent": inconsistent, "adjudicated": adjudicated,
            "parse_failures": failures, "orders": [{}, {}]}  # fmt: skip


def test_pairwise_tally_reports_the_win_rate_excluding_ties() -> None:
    tally = JudgeTally()
    for meta in (
        _meta("win"), _meta("win"), _meta("loss"),
        _meta("tie", inconsistent=True),                     # orders disagreed: a flip tie
        _meta("win", inconsistent=True, adjudicated=True),   # settled by adjudication
        _meta("tie", failures=2),                            # unreadable answers
    ):  # fmt: skip
        tally.add(meta)
    data = tally.to_dict(0.10)
    assert (data["wins"], data["losses"], data["ties"]) == (3, 1, 2)
    assert data["win_rate"] == 0.75 and data["inconsistent_ties"] == 1
    assert data["parse_failures"] == 2 and "malformed" in data["warning"]
    assert pairwise_note(data) == "win rate 75.0% excl. 2 ties (1 from swapped orders disagreeing)"


def test_pointwise_tally_has_no_pairwise_fields() -> None:
    tally = JudgeTally()
    tally.add({"parse_failures": 0, "verdicts": [{}, {}, {}]})
    assert "win_rate" not in tally.to_dict(0.10)
