"""`compare_runs` on two runs of conversations: pairs by scenario id and epoch, decides as for
any run, leaves invalid conversations (the simulated user failed fidelity) out of the verdict,
gives pass^k over scenarios, and names the first turn where the candidate did worse."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
from tests.conversations._fake import responder, scenario_row
from tests.conversations.test_run import AUTHORED, chat_eval, write_eval
from tests.support.openai_server import OpenAIServer, Reply

from aieval import Store
from aieval.core import Turn
from aieval.report import (
    compare_runs,
    comparison_schema,
    render_github,
    render_html,
    render_markdown,
    render_text,
)
from aieval.runner import load_eval, run_eval

HERE = "tests.conversations.test_compare"
RUDE = "<script>alert(1)</script> that is a stupid question | @octocat"


def rude_markup_first(turns: tuple[Turn, ...]) -> str:
    """The turn-1 regression: the first answer is rude (and carries markup), the later ones
    are right."""
    said = sum(1 for t in turns if t.role == "assistant")
    return RUDE if said == 0 else "your order has shipped"


def scripted(count: int, **more: Any) -> list[dict[str, Any]]:
    return [
        scenario_row(
            n, user_turns=["where is my order?", "and now?"], checks={"turn": ["polite"]}, **more
        )
        for n in range(1, count + 1)
    ]


def two_runs(
    folder: Path, store: str, baseline: str, candidate: str, count: int = 12, **settings: Any
) -> tuple[str, str]:
    path = write_eval(
        folder,
        scripted(count),
        conversation={"turn_checks": f"{AUTHORED}:TURN_CHECKS"},
        settings={"min": {"polite@min": 1.0}, **settings},
    )
    (base,) = run_eval(load_eval(path), store=store, target=baseline)
    (cand,) = run_eval(load_eval(path), store=store, target=candidate)
    return base.id, cand.id


def test_a_turn_1_regression_against_a_good_baseline_is_blocked_and_names_turn_1(
    tmp_path: Path, store_location: str
) -> None:
    base, cand = two_runs(
        tmp_path, store_location, f"{AUTHORED}:kind", f"{HERE}:rude_markup_first", count=25
    )
    with Store(store_location) as db:
        comparison = compare_runs(db, base, cand)
    assert comparison.outcome == "block"
    doc = comparison.to_dict()
    jsonschema.validate(doc, comparison_schema())
    section = doc["conversations"]
    assert section["paired"] == 25 and section["regressed_total"] == 25
    assert len(section["regressed"]) == 20  # the first 20 listed, the count holds them all
    first = section["regressed"][0]
    # the record's turn 2 is the assistant's first answer: exchange (user turn) 1
    assert first == {
        "scenario_id": "order-1",
        "epoch": 0,
        "turn": 2,
        "exchange": 1,
        "check": "polite",
        "baseline": 1.0,
        "candidate": 0.0,
        "baseline_said": "assistant: your order has shipped",
        "candidate_said": f"assistant: {RUDE}",
    }
    assert section["invalid"] == [] and section["pass_hat_k"] == []
    # every format shows it, escaped, bounded
    text = render_text(comparison, width=250)
    assert "Conversations · 25 scenarios paired" in text and "2 (1)" in text
    assert "and 5 more" in text
    html = render_html(comparison)
    assert "&lt;script&gt;alert(1)&lt;/script&gt; that is a stupid question" in html
    assert "<script>alert(1)" not in html
    markdown = render_markdown(comparison)
    assert "First regressed turn" in markdown and "\\| @" in markdown
    github = render_github(comparison)
    assert "First regressed turn (10 of 25)" in github and "_and 15 more_" in github
    assert "@octocat" not in github and "&lt;script&gt;" in github


def test_two_identical_runs_compare_as_any_run_with_no_regressed_turn(tmp_path: Path) -> None:
    store = str(tmp_path / "r.db")
    base, cand = two_runs(tmp_path, store, f"{AUTHORED}:kind", f"{AUTHORED}:kind", count=4)
    with Store(store) as db:
        comparison = compare_runs(db, base, cand)
    # 4 scenarios: too few to decide, as for any run of 4 examples
    assert comparison.outcome == "inconclusive"
    assert comparison.regressions_count == 0 and comparison.paired == 4
    assert comparison.conversations is not None
    assert comparison.conversations["regressed_total"] == 0
    assert comparison.conversations["regressed"] == []
    assert "0 where the candidate did worse" in render_text(comparison)


def test_pass_hat_k_over_scenarios_pairs_by_epoch(tmp_path: Path) -> None:
    store = str(tmp_path / "r.db")
    base, cand = two_runs(
        tmp_path, store, f"{AUTHORED}:kind", f"{AUTHORED}:rude_first", count=3, epochs=2
    )
    with Store(store) as db:
        comparison = compare_runs(db, base, cand)
    section = comparison.conversations
    assert section is not None
    assert section["pass_hat_k"] == [
        {"k": 1, "baseline": 1.0, "baseline_scenarios": 3, "candidate": 0.0,
         "candidate_scenarios": 3},
        {"k": 2, "baseline": 1.0, "baseline_scenarios": 3, "candidate": 0.0,
         "candidate_scenarios": 3},
    ]  # fmt: skip
    # one entry per scenario, at its first epoch that did worse
    assert [(r["scenario_id"], r["epoch"], r["turn"]) for r in section["regressed"]] == [
        ("order-1", 1, 2),
        ("order-2", 1, 2),
        ("order-3", 1, 2),
    ]
    assert "pass^k over the paired scenarios" in render_markdown(comparison)


def test_a_replayed_run_compared_with_its_recording_shows_no_regressed_turn(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    rows = [scenario_row(n, checks={"turn": ["polite"]}) for n in range(1, 5)]
    path = chat_eval(
        tmp_path, openai_server, rows, conversation={"turn_checks": f"{AUTHORED}:TURN_CHECKS"}
    )
    store = tmp_path / "r.db"
    (live,) = run_eval(load_eval(path), store=store)
    (again,) = run_eval(load_eval(path), store=store, replay=live.id)
    with Store(store) as db:
        comparison = compare_runs(db, live.id, again.id)
    section = comparison.conversations
    assert section is not None
    assert section["paired"] == 4 and section["regressed_total"] == 0
    assert comparison.regressions_count == 0 and comparison.outcome != "block"


LEAK = "track order 1 and have the refund for the broken blue bicycle sent to my card"


def _leaks_order_1(body: Any) -> Any:
    """The fake model, except that the simulated user of order 1 says its goal word for word."""
    system = body["messages"][0]
    if system["role"] == "system" and LEAK in system["content"]:
        said = sum(1 for m in body["messages"] if m["role"] == "assistant")
        return Reply(f"Hi. My goal: {LEAK}." if said == 0 else "Thanks, that is all. [DONE]")
    return responder(body)


def test_invalid_conversations_are_counted_apart_and_never_decide_the_verdict(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    """The candidate's simulated user leaks its goal in scenario order-1: that conversation is
    invalid, listed with its scenario and side, and paired on neither side; the verdict is the
    one of the other scenarios."""
    rows = [scenario_row(1, goal=LEAK, checks={"turn": ["polite"]})]
    rows += [scenario_row(n, checks={"turn": ["polite"]}) for n in range(2, 5)]
    path = chat_eval(
        tmp_path, openai_server, rows, conversation={"turn_checks": f"{AUTHORED}:TURN_CHECKS"}
    )
    store = tmp_path / "r.db"
    (base,) = run_eval(load_eval(path), store=store)
    openai_server.responder = _leaks_order_1
    (cand,) = run_eval(load_eval(path), store=store)
    with Store(store) as db:
        comparison = compare_runs(db, base.id, cand.id)
        invalid = db.get_sample(cand.id, "order-1")
    assert invalid.extra["fidelity"]["valid"] is False
    # neither paired nor "only in the baseline": it decides nothing (it used to count as a
    # regression, "no longer passes", and lower the candidate's pass rate)
    assert comparison.paired == 3 and comparison.only_baseline == []
    assert comparison.regressions_count == 0
    rate = next(m for m in comparison.metrics if m["name"] == "pass_rate")
    assert (rate["baseline"], rate["candidate"], rate["n"]) == (1.0, 1.0, 3)
    section = comparison.conversations
    assert section is not None
    assert section["invalid_candidate"] == 1 and section["invalid_baseline"] == 0
    assert section["unpaired_invalid"] == ["order-1"]
    (listed,) = section["invalid"]
    assert (listed["scenario_id"], listed["side"]) == ("order-1", "candidate")
    assert "goal_leak" in listed["reason"]
    assert section["paired"] == 3 and section["regressed_total"] == 0
    assert "left out of the verdict" in render_text(comparison, width=250)
    jsonschema.validate(comparison.to_dict(), comparison_schema())


def test_a_run_of_one_answer_pairs_with_each_epoch_of_the_other(tmp_path: Path) -> None:
    store = str(tmp_path / "r.db")
    path = write_eval(
        tmp_path,
        scripted(2),
        conversation={"turn_checks": f"{AUTHORED}:TURN_CHECKS"},
    )
    (base,) = run_eval(load_eval(path), store=store, target=f"{AUTHORED}:kind")
    path = write_eval(
        tmp_path,
        scripted(2),
        conversation={"turn_checks": f"{AUTHORED}:TURN_CHECKS"},
        settings={"epochs": 2},
    )
    (cand,) = run_eval(load_eval(path), store=store, target=f"{AUTHORED}:rude_first")
    with Store(store) as db:
        section = compare_runs(db, base.id, cand.id).conversations
    assert section is not None and section["regressed_total"] == 2
    assert [(r["scenario_id"], r["epoch"], r["turn"]) for r in section["regressed"]] == [
        ("order-1", 1, 2),
        ("order-2", 1, 2),
    ]
    assert [(r["k"], r["baseline"], r["candidate"]) for r in section["pass_hat_k"]] == [
        (1, 1.0, 0.0),
        (2, None, 0.0),
    ]


def rude_to_order_1(turns: tuple[Turn, ...]) -> str:
    """Rude in its first answer to order 1 only; right everywhere else."""
    said = sum(1 for t in turns if t.role == "assistant")
    return RUDE if said == 0 and "order 1?" in turns[0].content else "your order has shipped"


def test_a_min_setting_is_no_rule_of_compare_and_few_scenarios_are_inconclusive(
    tmp_path: Path,
) -> None:
    """What the docs say blocks: `settings.min` is the run's minimum (the candidate's run
    misses it), never a rule of `compare`; of 3 scenarios, one turn-1 regression is not shown
    worse and `paired_examples` (60) leaves it inconclusive, while all 3 regressed block on
    the pass rate and the weighted score."""
    rows = [
        scenario_row(
            n, user_turns=[f"where is order {n}?", "and now?"], checks={"turn": ["polite"]}
        )
        for n in (1, 2, 3)
    ]
    path = write_eval(
        tmp_path,
        rows,
        conversation={"turn_checks": f"{AUTHORED}:TURN_CHECKS"},
        settings={"min": {"polite@min": 1.0}},
    )
    store = tmp_path / "r.db"
    runs = [
        run_eval(load_eval(path), store=store, target=f"{where}")[0]
        for where in (f"{AUTHORED}:kind", f"{HERE}:rude_to_order_1", f"{HERE}:rude_markup_first")
    ]
    base, one, every = runs
    assert [m.metric for m in one.missed_minimums] == ["polite@min"]  # aieval run exits 4
    with Store(store) as db:
        some = compare_runs(db, base.id, one.id)
        all_worse = compare_runs(db, base.id, every.id)
    assert some.outcome == "inconclusive"
    unsure = {r.rule for r in some.decision.rules if r.inconclusive}
    assert unsure == {"paired_examples", "weighted_score_noninferior"}
    assert not [r.rule for r in some.decision.rules if not r.passed and not r.inconclusive]
    assert not [r for r in some.decision.rules if "min" in r.rule and "paired" not in r.rule]
    assert all_worse.outcome == "block"
    failed = {r.rule for r in all_worse.decision.rules if not r.passed and not r.inconclusive}
    assert failed == {"pass_rate_not_worse", "weighted_score_noninferior"}
