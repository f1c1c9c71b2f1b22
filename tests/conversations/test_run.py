"""`aieval run` plays scenarios: one sample per scenario, its record stored in the sample's
extra on both store backends, the scenario set's version as the run's dataset hash, scores per
turn and per conversation, and a failed conversation as the sample's error."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from tests.conversations._authored import kind
from tests.conversations._fake import responder, scenario_row
from tests.conversations._sdk import assistant, serve, through_the_sdk
from tests.support.cli import run_main
from tests.support.openai_server import OpenAIServer, Reply

from aieval import Store
from aieval.conversations import load_scenarios
from aieval.core import Conversation
from aieval.errors import ConfigError, DatasetError
from aieval.runner import RayExecutor, load_eval, run, run_eval

AUTHORED = "tests.conversations._authored"
SDK = "tests.conversations._sdk"


def write_eval(
    folder: Path,
    rows: list[dict[str, Any]],
    *,
    target: dict[str, Any] | None = None,
    conversation: dict[str, Any] | None = None,
    **more: Any,
) -> Path:
    (folder / "scenarios.yaml").write_text(yaml.safe_dump(rows), encoding="utf-8")
    data: dict[str, Any] = {
        "name": "support",
        "dataset": "scenarios.yaml",
        "conversation": conversation if conversation is not None else {},
        **more,
    }
    if target is not None:
        data["target"] = target
    path = folder / "eval.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def chat_eval(folder: Path, server: OpenAIServer, rows: list[dict[str, Any]], **more: Any) -> Path:
    server.responder = responder
    user = {"provider": "openai-compatible", "model": "user-model", "base_url": server.base_url}
    target = {"provider": "openai-compatible", "model": "target-model", "base_url": server.base_url}
    conversation = {"user": user, **more.pop("conversation", {})}
    return write_eval(folder, rows, target=target, conversation=conversation, **more)


def test_each_scenario_is_a_sample_with_its_record(
    openai_server: OpenAIServer, tmp_path: Path, store_location: str
) -> None:
    rows = [scenario_row(n) for n in range(1, 4)]
    path = chat_eval(tmp_path, openai_server, rows)
    (result,) = run_eval(load_eval(path), store=store_location)
    with Store(store_location) as db:
        run = db.get_run(result.id)
        samples = {s.id: s for s in db.iter_samples(run.id)}
    assert run.dataset_hash == load_scenarios(tmp_path / "scenarios.yaml").version
    assert run.config["conversation"]["scenarios"] == run.dataset_hash
    assert "workflow" not in run.config  # reports do not read it as a workflow run
    assert sorted(samples) == ["order-1", "order-2", "order-3"]
    for n in range(1, 4):
        sample = samples[f"order-{n}"]
        record = Conversation.from_dict(sample.extra["conversation"])
        assert record.scenario_id == f"order-{n}" and record.outcome.completed
        assert sample.prediction == f"Your order is shipped-{n}."
        assert sample.error is None
        assert sample.input_tokens is not None and sample.input_tokens > 0
        tool_turns = [t for t in record.turns if t.role == "tool"]
        assert tool_turns and tool_turns[0].content == json.dumps({"status": f"shipped-{n}"})


def test_a_failed_conversation_is_the_samples_error_not_a_zero(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    rows = [scenario_row(1), scenario_row(2)]
    path = chat_eval(
        tmp_path,
        openai_server,
        rows,
        conversation={"turn_checks": f"{AUTHORED}:TURN_CHECKS"},
        settings={"max_error_rate": 1.0},
    )
    openai_server.responder = None
    from tests.support.openai_server import Status

    def fail_order_2(body: Any) -> Any:
        text = json.dumps(body["messages"])
        return Status(400) if "order 2" in text and not body.get("seed", 0) else responder(body)

    openai_server.responder = fail_order_2
    (result,) = run_eval(load_eval(path), store=tmp_path / "r.db")
    with Store(tmp_path / "r.db") as db:
        samples = {s.id: s for s in db.iter_samples(result.id)}
    failed = samples["order-2"]
    assert failed.error is not None and "400" in failed.error
    assert failed.scores == {}  # not scored: an error, never a 0
    assert Conversation.from_dict(failed.extra["conversation"]).outcome.stop_reason == "failed"
    assert samples["order-1"].error is None


def test_a_row_naming_a_check_the_author_did_not_register_is_refused(
    tmp_path: Path,
) -> None:
    rows = [scenario_row(1, checks={"turn": ["os.system"]})]
    path = write_eval(tmp_path, rows, conversation={"turn_checks": f"{AUTHORED}:TURN_CHECKS"})
    with pytest.raises(DatasetError, match=r"checks.turn\[0\]'.*'os.system' is not a check"):
        run_eval(load_eval(path), store=tmp_path / "r.db", target=f"{AUTHORED}:kind")


def test_no_target_without_a_replay_all_is_refused(tmp_path: Path) -> None:
    path = write_eval(tmp_path, [scenario_row(1)])
    with pytest.raises(ConfigError, match="give the assistant under test as the target"):
        run_eval(load_eval(path), store=tmp_path / "r.db")


def test_a_turn_1_regression_is_blocked_by_a_min_gate_a_last_turn_judge_would_pass(
    openai_server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The assistant calls the scripted model through the real openai client."""

    def rude_first(body: Any) -> Reply:
        said = sum(1 for m in body["messages"] if m["role"] == "assistant")
        return Reply("that is a stupid question" if said == 0 else "your order has shipped")

    openai_server.responder = rude_first
    serve(monkeypatch, openai_server.base_url)
    rows = [
        scenario_row(1, user_turns=["where is my order?", "and now?"], checks={"turn": ["polite"]})
    ]
    path = write_eval(
        tmp_path,
        rows,
        conversation={"target": f"{SDK}:assistant", "turn_checks": f"{AUTHORED}:TURN_CHECKS"},
        settings={"min": {"polite@min": 1.0}},
    )
    (result,) = run_eval(load_eval(path), store=tmp_path / "r.db")
    assert len(openai_server.requests) == 2 and through_the_sdk(openai_server.requests)
    assert assistant.client.made == {}  # the run closed the assistant's client at its end
    with Store(tmp_path / "r.db") as db:
        (sample,) = db.iter_samples(result.id)
    record = Conversation.from_dict(sample.extra["conversation"])
    answers = [t.content for t in record.turns if t.role == "assistant"]
    assert answers == ["that is a stupid question", "your order has shipped"]
    # a judge of the last turn alone would pass it
    assert sample.prediction == "your order has shipped"
    assert sample.scores["polite@min"].value == 0.0
    assert sample.scores["polite@mean"].value == 0.5
    assert sample.scores["polite@min"].reason == "turn 2 scored 0"
    assert [m.metric for m in result.missed_minimums] == ["polite@min"]
    assert not sample.passed  # and aieval run exits 4 on the missed minimum


def test_conversation_checks_and_the_built_in_goal_and_final_state(tmp_path: Path) -> None:
    rows = [
        scenario_row(
            1,
            user_turns=["where is my order?"],
            stop={"goal_check": "shipped"},
            expected_state="your order has shipped",
            checks={"conversation": ["answered"]},
        ),
        scenario_row(2, user_turns=["hello"], expected_state="cancelled"),
    ]
    path = write_eval(
        tmp_path,
        rows,
        conversation={
            "conversation_checks": f"{AUTHORED}:CONVERSATION_CHECKS",
            "goal_checks": f"{AUTHORED}:GOAL_CHECKS",
            "builtin_checks": ["goal_reached", "final_state"],
        },
    )
    (result,) = run_eval(load_eval(path), store=tmp_path / "r.db", target=f"{AUTHORED}:kind")
    with Store(tmp_path / "r.db") as db:
        samples = {s.id: s for s in db.iter_samples(result.id)}
    one, two = samples["order-1"].scores, samples["order-2"].scores
    assert (one["answered"].value, one["goal_reached"].value, one["final_state"].value) == (
        1.0,
        1.0,
        1.0,
    )
    assert two["answered"].value is None  # not a check this scenario names
    assert two["goal_reached"].value is None  # no goal check
    assert two["final_state"].value == 0.0
    assert '-"cancelled"' in (two["final_state"].reason or "")
    assert '+"your order has shipped"' in (two["final_state"].reason or "")


def test_the_server_refuses_conversation_settings_from_a_request(tmp_path: Path) -> None:
    from aieval.server._paths import confine_config

    path = write_eval(tmp_path, [scenario_row(1)], conversation={"tools": "os:system"})
    with pytest.raises(ConfigError, match="this server does not run conversation evaluations"):
        confine_config(load_eval(path), [tmp_path], allow_imports=True)


def test_epochs_are_played_live_and_replayed_by_epoch(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    path = chat_eval(tmp_path, openai_server, [scenario_row(1)], settings={"epochs": 2})
    (live,) = run_eval(load_eval(path), store=tmp_path / "r.db")
    sent = len(openai_server.requests)
    (again,) = run_eval(load_eval(path), store=tmp_path / "r.db", replay=live.id)
    with Store(tmp_path / "r.db") as db:
        first = {s.id: s for s in db.iter_samples(live.id)}
        second = {s.id: s for s in db.iter_samples(again.id)}
    assert sorted(first) == sorted(second) == ["order-1#1", "order-1#2"]
    for key in first:
        played = Conversation.from_dict(first[key].extra["conversation"])
        replayed = Conversation.from_dict(second[key].extra["conversation"])
        assert played.epoch == replayed.epoch == int(key[-1])
        assert replayed.transcript() == played.transcript()
        assert {t.source for t in replayed.turns if t.role == "user"} == {"replayed"}
    # strict: the target answered again (2 answers per epoch), the simulated user never
    later = openai_server.requests[sent:]
    assert later and all("role-playing" not in json.dumps(r.body) for r in later)


def test_a_check_named_as_the_other_kind_is_refused(tmp_path: Path) -> None:
    rows = [scenario_row(1, checks={"conversation": ["polite"]})]
    path = write_eval(tmp_path, rows, conversation={"turn_checks": f"{AUTHORED}:TURN_CHECKS"})
    with pytest.raises(DatasetError, match=r"checks\.conversation names 'polite', a turn check"):
        run_eval(load_eval(path), store=tmp_path / "r.db", target=f"{AUTHORED}:kind")


GOAL = "track order 1 and have the refund for the broken blue bicycle sent to my card"


def _leaking_user(body: Any) -> Any:
    """The fake model, except that the simulated user says its goal word for word."""
    from tests.support.openai_server import Reply

    messages = body["messages"]
    first = messages[0]
    if first["role"] == "system" and "role-playing a user" in first["content"]:
        said = sum(1 for m in messages if m["role"] == "assistant")
        return Reply(f"Hi. My goal: {GOAL}." if said == 0 else "Thanks, that is all. [DONE]")
    return responder(body)


def test_a_simulator_that_fails_fidelity_makes_its_conversation_invalid_not_a_failure(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    """A simulated user that reveals its goal verbatim: the sample keeps its fidelity flags,
    its checks are not applicable (no score for or against the target), and it is no error;
    a clean conversation beside it is scored as usual."""
    rows = [
        scenario_row(1, goal=GOAL, checks={"turn": ["polite"]}),
        scenario_row(2, user_turns=["where is my order 2?"], checks={"turn": ["polite"]}),
    ]
    path = chat_eval(
        tmp_path, openai_server, rows, conversation={"turn_checks": f"{AUTHORED}:TURN_CHECKS"}
    )
    openai_server.responder = _leaking_user
    (result,) = run_eval(load_eval(path), store=tmp_path / "r.db")
    with Store(tmp_path / "r.db") as db:
        samples = {s.id: s for s in db.iter_samples(result.id)}
    leaked, clean = samples["order-1"], samples["order-2"]
    assert leaked.error is None
    assert leaked.extra["fidelity"]["valid"] is False
    assert [f["kind"] for f in leaked.extra["fidelity"]["flags"]] == ["goal_leak"]
    score = leaked.scores["polite@min"]
    assert score.value is None and (score.reason or "").startswith("invalid conversation")
    assert clean.extra["fidelity"] == {"valid": True, "flags": []}
    assert clean.scores["polite@min"].value == 1.0


def test_the_assistant_given_twice_or_a_user_without_its_model_is_refused(tmp_path: Path) -> None:
    twice = {"target": f"{AUTHORED}:kind"}
    path = write_eval(tmp_path, [scenario_row(1)], conversation=twice)
    with pytest.raises(ConfigError, match="give the assistant under test once"):
        run_eval(load_eval(path), store=tmp_path / "r.db", target=f"{AUTHORED}:kind")
    for user, said in [
        ({"model": "m"}, "provider: \\(with model:\\) or python:, once"),
        ({"provider": "ollama", "python": f"{AUTHORED}:kind"}, "or python:, once"),
        ({"provider": "ollama"}, "provider 'ollama' needs model:"),
        ({"python": f"{AUTHORED}:kind"}, "has no generate\\(request\\) method"),
    ]:
        path = write_eval(tmp_path, [scenario_row(1)], conversation={**twice, "user": user})
        with pytest.raises(ConfigError, match=said):
            run_eval(load_eval(path), store=tmp_path / "r.db")
    path = write_eval(tmp_path, [scenario_row(1)], conversation={"target": "missing.py:fn"})
    with pytest.raises(ConfigError, match=r"conversation.target: .*missing.py: Python file not"):
        run_eval(load_eval(path), store=tmp_path / "r.db")


class _NoCluster(RayExecutor):
    """The Ray executor, failing the test should any sample reach it (no cluster is started)."""

    async def map(self, fn: Any, items: Any) -> AsyncIterator[Any]:
        raise AssertionError("no sample of a conversation run may reach Ray workers")
        yield  # an async generator, as the executor's map


RAY_REFUSED = "executor: ray: a conversation run plays its scenarios in this process"


def test_a_conversation_run_on_ray_is_refused_before_anything_is_stored(tmp_path: Path) -> None:
    (tmp_path / "scenarios.yaml").write_text(yaml.safe_dump([scenario_row(1)]), encoding="utf-8")
    with pytest.raises(ConfigError, match=RAY_REFUSED + r".*run it with the local executor"):
        run(
            name="support",
            dataset=str(tmp_path / "scenarios.yaml"),
            scorers=[],
            target=kind,
            conversation={},
            executor=_NoCluster(),
            store=tmp_path / "r.db",
        )
    with Store(tmp_path / "r.db") as db:
        assert db.list_runs() == []


def test_aieval_run_executor_ray_on_a_conversation_eval_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_eval(tmp_path, [scenario_row(1)], conversation={"target": f"{AUTHORED}:kind"})
    done = run_main(capsys, monkeypatch, "run", str(path), "--db", "r.db", "--executor", "ray")
    assert done.returncode == 2
    assert f"eval.yaml: {RAY_REFUSED}" in " ".join(done.stderr.split())
    with Store(tmp_path / "r.db") as db:
        assert db.list_runs() == []


def test_a_python_assistant_named_by_the_eval_file_plays_every_epoch(tmp_path: Path) -> None:
    conversation = {"target": f"{AUTHORED}:kind"}
    path = write_eval(tmp_path, [scenario_row(1, user_turns=["hi"])], conversation=conversation)
    (result,) = run_eval(load_eval(path), store=tmp_path / "r.db", epochs=2)
    with Store(tmp_path / "r.db") as db:
        samples = sorted(db.iter_samples(result.id), key=lambda s: s.epoch or 0)
    assert [(s.id, s.epoch, s.prediction) for s in samples] == [
        ("order-1#1", 1, "your order has shipped"),
        ("order-1#2", 2, "your order has shipped"),
    ]
    assert result.name == "support" and result.status == "completed"


def _ai_user(body: Any) -> Any:
    """The fake model, except that the simulated user of orders 1 and 2 breaks persona last."""
    from tests.support.openai_server import Reply

    messages = body["messages"]
    first = messages[0]
    if first["role"] == "system" and "role-playing a user" in first["content"]:
        said = sum(1 for m in messages if m["role"] == "assistant")
        if said and ("track order 1" in first["content"] or "track order 2" in first["content"]):
            return Reply("As an AI language model, I have no order to track. [DONE]")
    return responder(body)


def test_invalid_conversations_are_counted_apart_from_the_runs_pass_rate(
    openai_server: OpenAIServer, tmp_path: Path, store_location: str
) -> None:
    """A run of 3 whose simulated user broke persona in 2: those 2 neither pass nor fail
    (stored without a pass flag, shown "invalid"), the pass rate is 1/1 over the valid one, in
    the run's summary and in its report by either path, which says they were left out."""
    from tests.support.close import differences

    from aieval.cli._samples import _verdict
    from aieval.report import _bundle as bundle
    from aieval.report import build_report, report_schema
    from aieval.report._document import coverage_text

    rows = [scenario_row(n, checks={"turn": ["polite"]}) for n in (1, 2, 3)]
    path = chat_eval(
        tmp_path, openai_server, rows, conversation={"turn_checks": f"{AUTHORED}:TURN_CHECKS"}
    )
    openai_server.responder = _ai_user
    (result,) = run_eval(load_eval(path), store=store_location)
    assert (result.summary.samples, result.summary.passed, result.summary.invalid) == (3, 1, 2)
    assert result.pass_rate == 1.0 and result.summary.to_dict()["invalid"] == 2
    with Store(store_location) as db:
        samples = {s.id: s for s in db.iter_samples(result.id)}
        stored = db.get_run(result.id).metrics or {}
        assert (stored["pass_rate"], stored["invalid"]) == (1.0, 2)
        summed = build_report(db, result.id, bootstrap_max_n=1).to_dict()
        sliced = build_report(db, result.id, bootstrap_max_n=1, slice_by=["topic"]).to_dict()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(Store, "plain_run", lambda self, run: False)
            patch.setattr(bundle, "sums_report", lambda *args: None)
            recorded = build_report(db, result.id, bootstrap_max_n=1).to_dict()
    for sid in ("order-1", "order-2"):
        invalid = samples[sid]
        assert invalid.extra["fidelity"]["flags"][0]["kind"] == "persona_break"
        assert invalid.passed is None and invalid.error is None
        assert invalid.graded_verdict().invalid
        assert invalid.graded_verdict().reasons[0].key == "simulated user"
        assert _verdict(invalid).plain == "invalid"
    assert samples["order-3"].passed is True and _verdict(samples["order-3"]).plain == "pass"
    rate = summed["pass_rate"]
    assert (rate["estimate"], rate["passed"], rate["n"], rate["invalid"]) == (1.0, 1, 1, 2)
    assert summed["conversations"]["invalid"] == 2
    assert summed["failure_reasons"] == []  # an invalid conversation is no failure
    assert differences(summed, recorded) == []
    (group,) = sliced["groups"]["slices"]["topic"]  # a slice's rate leaves them out too
    assert group["samples"] == 3
    assert (group["pass_rate"]["passed"], group["pass_rate"]["n"]) == (1, 1)
    assert group["pass_rate"]["invalid"] == 2
    jsonschema.Draft202012Validator(report_schema()).validate(sliced)
    jsonschema.Draft202012Validator(report_schema()).validate(summed)
    # beside the rate, alone: the check's n/a on the invalid ones is no low coverage
    assert coverage_text(summed) == "2 invalid (simulated user), left out of the pass rate"
    assert result.low_coverage == [] and "low_coverage" not in summed
    polite = result.summary.scorers["polite@min"]
    assert (polite.count, polite.not_applicable, polite.invalid, polite.errors) == (1, 0, 2, 0)
    assert polite.to_dict()["invalid"] == 2 and stored["scorers"]["polite@min"]["invalid"] == 2
    (row,) = [c for c in summed["criteria"] if c["name"] == "polite@min"]
    assert (row["n"], row["not_applicable"], row["invalid"], row["errors"]) == (1, 0, 2, 0)
    assert result.summary.unscored == 0  # their checks were n/a: invalid, not unscored


def test_aieval_run_and_show_say_invalid_not_fail(
    openai_server: OpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The tester's run: `aieval run` prints the pass rate over the valid conversation and the
    2 invalid ones apart; `aieval show` lists them as "invalid", and `--failed` leaves them out."""
    rows = [scenario_row(n, checks={"turn": ["polite"]}) for n in (1, 2, 3)]
    path = chat_eval(
        tmp_path, openai_server, rows, conversation={"turn_checks": f"{AUTHORED}:TURN_CHECKS"}
    )
    openai_server.responder = _ai_user
    env = {"COLUMNS": "250"}
    done = run_main(capsys, monkeypatch, "run", str(path), "--db", "r.db", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "pass rate 100.0%" in done.stdout
    assert "2 invalid (simulated user), left out of the pass rate" in done.stdout
    with Store(tmp_path / "r.db") as db:
        (run,) = db.list_runs()
    shown = run_main(capsys, monkeypatch, "show", run.id, "--db", "r.db", cwd=tmp_path, env=env)
    assert "pass rate 100.0% of 1 sample (2 invalid (simulated user) left out)" in shown.stdout
    assert shown.stdout.count("· invalid") == 2 and shown.stdout.count("· pass") == 1
    assert "· fail" not in shown.stdout
    only = run_main(
        capsys, monkeypatch, "show", run.id, "--failed", "--db", "r.db", cwd=tmp_path, env=env
    )
    assert "sample order-" not in only.stdout


def test_a_check_that_scored_no_valid_sample_is_counted_over_the_valid_ones(
    openai_server: OpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The tester's run: the only scenario with an ``expected_state`` is invalid, so
    ``final_state`` scored none of the valid ones; `aieval run` exits 3 naming the 1 valid
    sample it was checked against (not all 3), and the 2 invalid ones left out."""
    rows = [
        scenario_row(1, expected_state="shipped", checks={"turn": ["polite"]}),
        scenario_row(2, checks={"turn": ["polite"]}),
        scenario_row(3, checks={"turn": ["polite"]}),
    ]
    conversation = {"turn_checks": f"{AUTHORED}:TURN_CHECKS", "builtin_checks": ["final_state"]}
    path = chat_eval(tmp_path, openai_server, rows, conversation=conversation)
    openai_server.responder = _ai_user
    env = {"COLUMNS": "250"}
    done = run_main(capsys, monkeypatch, "run", str(path), "--db", "r.db", cwd=tmp_path, env=env)
    assert done.returncode == 3, done.stdout
    said = " ".join(done.stderr.split())
    assert (
        "scorer 'final_state' scored no sample of 1 valid (2 invalid (simulated user) left out)"
        in said
    ), said


def _once_ai_user() -> Any:
    """The fake model, except that the simulated user of order 2 breaks persona in every
    conversation and that of order 1 in its first only (so in one epoch of two)."""
    from tests.support.openai_server import Reply

    broke: set[str] = set()

    def reply(body: Any) -> Any:
        messages = body["messages"]
        first = messages[0]
        if first["role"] == "system" and "role-playing a user" in first["content"]:
            said = sum(1 for m in messages if m["role"] == "assistant")
            once = "track order 1" in first["content"] and "1" not in broke
            if said and ("track order 2" in first["content"] or once):
                broke.add("1" if "track order 1" in first["content"] else "2")
                return Reply("As an AI language model, I have no order to track. [DONE]")
        return responder(body)

    return reply


def test_pass_hat_k_over_epochs_is_over_the_valid_answers_and_counts_the_invalid_apart(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    """Two epochs of three scenarios: order 1 invalid in one epoch, order 2 in both, order 3
    valid and passed in both. pass^k is over each scenario's valid answers (order 1 has one,
    order 2 none and is left out), so the run's pass^1 and pass^2 are 100%, not 50% and 33%
    as when an invalid answer counted as not passed; the summary, the report's JSON and every
    format say how many answers were left out."""
    from aieval.report import build_report, render_html, render_markdown, render_text, report_schema

    rows = [scenario_row(n, checks={"turn": ["polite"]}) for n in (1, 2, 3)]
    path = chat_eval(
        tmp_path,
        openai_server,
        rows,
        conversation={"turn_checks": f"{AUTHORED}:TURN_CHECKS"},
        settings={"epochs": 2},
    )
    openai_server.responder = _once_ai_user()
    (result,) = run_eval(load_eval(path), store=tmp_path / "r.db")
    assert (result.summary.samples, result.summary.passed, result.summary.invalid) == (6, 3, 3)
    epochs = result.summary.epochs
    assert epochs is not None
    assert (epochs.pass_hat_k, epochs.pass_at_k) == ({"1": 1.0, "2": 1.0}, {"1": 1.0, "2": 1.0})
    assert (epochs.examples, epochs.complete, epochs.invalid, epochs.invalid_examples) == (
        3,
        3,
        3,
        1,
    )
    with Store(tmp_path / "r.db") as db:
        report = build_report(db, result.id, bootstrap_max_n=1)
    doc = report.to_dict()
    section = doc["epochs"]
    assert (section["pass_hat_k"], section["invalid"], section["invalid_examples"]) == (
        {"1": 1.0, "2": 1.0},
        3,
        1,
    )
    by_id = {ex["id"]: ex for ex in section["examples"]}
    assert (by_id["order-1"]["n"], by_id["order-1"]["passed"], by_id["order-1"]["invalid"]) == (
        1,
        1,
        1,
    )
    assert by_id["order-1"]["pass_hat_k"] == {"1": 1.0}
    assert (by_id["order-2"]["n"], by_id["order-2"]["invalid"]) == (0, 2)
    assert by_id["order-2"]["pass_hat_k"] == {}
    assert "invalid" not in by_id["order-3"] and by_id["order-3"]["pass_hat_k"]["2"] == 1.0
    jsonschema.Draft202012Validator(report_schema()).validate(doc)
    note = "3 invalid answers (simulated user) left out of pass@k and pass^k, 1 example with"
    for text in (render_text(doc, width=250), render_markdown(doc), render_html(doc)):
        assert note in " ".join(text.split())
        assert "1/1 (1 invalid)" in text and "0/0 (2 invalid)" in text
