"""`aieval run --replay RUN`: conversations replayed from a stored run by scenario id and
epoch; `--estimate` before spending; `aieval show` prints the transcript. The assistant and the
simulated user call the scripted loopback model through the real openai client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.conversations._fake import no_connections, responder, scenario_row
from tests.conversations._sdk import serve, through_the_sdk
from tests.support.cli import Done, run_main
from tests.support.openai_server import OpenAIServer, Reply

from aieval import Store
from aieval.core import Conversation

AUTHORED = "tests.conversations._authored"
SDK = "tests.conversations._sdk"


def write(
    folder: Path, server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, count: int, **more: object
) -> None:
    """An eval of ``count`` scenarios whose assistant and simulated user call the scripted
    model through the real openai client (tests/conversations/_sdk.py)."""
    server.responder = responder
    serve(monkeypatch, server.base_url)
    rows = [scenario_row(n, checks={"turn": ["polite"]}) for n in range(1, count + 1)]
    lines = "".join(json.dumps(row) + "\n" for row in rows)
    (folder / "scenarios.jsonl").write_text(lines, encoding="utf-8")
    data = {
        "name": "support",
        "dataset": "scenarios.jsonl",
        "conversation": {
            "target": f"{SDK}:assistant",
            "user": {"python": f"{SDK}:SDKUser", "model": "user-model"},
            "turn_checks": f"{AUTHORED}:TURN_CHECKS",
        },
        "settings": {"cache": False},
        **more,
    }
    (folder / "eval.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")


def aieval(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, cwd: Path, *args: str
) -> Done:
    return run_main(capsys, monkeypatch, *args, cwd=cwd)


def stored(folder: Path) -> dict[str, list[object]]:
    """Each run's samples, newest run last: (id, transcript, scores, tokens)."""
    with Store(folder / "r.db") as db:
        runs = sorted(db.list_runs(name="support"), key=lambda r: r.created_at)
        return {
            run.id: [
                (
                    s.id,
                    Conversation.from_dict(s.extra["conversation"]).transcript(),
                    {k: v.value for k, v in s.scores.items()},
                    (s.input_tokens or 0) + (s.output_tokens or 0),
                    s.error,
                )
                for s in db.iter_samples(run.id)
            ]
            for run in runs
        }


@pytest.mark.slow
def test_200_scenarios_replayed_all_are_identical_with_no_connection(
    openai_server: OpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write(tmp_path, openai_server, monkeypatch, 200)
    live = aieval(capsys, monkeypatch, tmp_path, "run", "eval.yaml", "--db", "r.db", "-q")
    assert live.returncode == 0, live.stderr
    assert through_the_sdk(openai_server.requests)
    asked = len(openai_server.requests)
    (live_id,) = stored(tmp_path)
    with no_connections(monkeypatch) as attempts:
        done = aieval(
            capsys, monkeypatch, tmp_path, "run", "eval.yaml", "--db", "r.db", "-q",
            "--replay", live_id, "--replay-mode", "all",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert attempts == [] and len(openai_server.requests) == asked
    runs = stored(tmp_path)
    first, second = (runs[k] for k in runs)
    assert len(first) == len(second) == 200
    same = [a[:3] == b[:3] for a, b in zip(first, second, strict=True)]
    assert sum(same) == 200
    assert all(row[4] is None for row in second)
    live_tokens = sum(int(row[3]) for row in first)  # type: ignore[call-overload]
    replay_tokens = sum(int(row[3]) for row in second)  # type: ignore[call-overload]
    assert live_tokens > 0 and replay_tokens <= 0.05 * live_tokens


def test_a_replay_miss_fails_that_sample_closed_naming_scenario_and_turn(
    openai_server: OpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write(tmp_path, openai_server, monkeypatch, 2, replay=None)
    assert (
        aieval(capsys, monkeypatch, tmp_path, "run", "eval.yaml", "--db", "r.db", "-q").returncode
        == 0
    )
    (live_id,) = stored(tmp_path)
    write(tmp_path, openai_server, monkeypatch, 3, replay={"run": live_id, "mode": "strict"})
    estimate = aieval(
        capsys, monkeypatch, tmp_path, "run", "eval.yaml", "--db", "r.db", "--estimate"
    )
    assert estimate.returncode == 0, estimate.stderr
    assert "3 conversations (replay strict)" in estimate.stdout
    assert "simulated user calls: at most 0" in estimate.stdout
    requests = len(openai_server.requests)
    done = aieval(
        capsys, monkeypatch, tmp_path, "run", "eval.yaml", "--db", "r.db", "-q",
        "--max-error-rate", "1",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(stored(tmp_path)) == 2
    replayed = next(reversed(stored(tmp_path).values()))
    errors = {row[0]: row[4] for row in replayed}
    assert errors["order-1"] is None and errors["order-2"] is None
    assert "scenario 'order-3', turn 1" in str(errors["order-3"])
    user_calls = [r for r in openai_server.requests[requests:] if "role-playing" in str(r.body)]
    assert user_calls == []  # strict: only the target is called
    missed = [r for r in openai_server.requests[requests:] if "order 3" in json.dumps(r.body)]
    assert missed == []  # the miss asked nothing live in its place
    assert through_the_sdk(openai_server.requests)


def test_estimate_live_and_show_prints_the_transcript(
    openai_server: OpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write(tmp_path, openai_server, monkeypatch, 2)
    estimate = aieval(
        capsys, monkeypatch, tmp_path, "run", "eval.yaml", "--db", "r.db", "--estimate"
    )
    assert estimate.returncode == 0, estimate.stderr
    # 2 scenarios x 6 user turns x (1 answer + up to 8 tool rounds)
    assert "target calls: 2 to 108 (the most counts up to 8 tool rounds" in estimate.stdout
    assert "simulated user calls: at most 12" in estimate.stdout
    assert "tokens: unknown before a run (no record)" in estimate.stdout
    assert openai_server.requests == []
    assert (
        aieval(capsys, monkeypatch, tmp_path, "run", "eval.yaml", "--db", "r.db", "-q").returncode
        == 0
    )
    (run_id,) = stored(tmp_path)
    shown = aieval(capsys, monkeypatch, tmp_path, "show", run_id, "--db", "r.db")
    assert shown.returncode == 0, shown.stderr
    assert "conversation order-1 (epoch 0)" in shown.stdout
    assert "[1] user (simulated): Hello, where is my order 1?" in shown.stdout
    assert '-> lookup_order({"order_id": 1}) = {"status": "shipped-1"}' in shown.stdout
    assert "ended: user_done" in shown.stdout


def test_branch_replay_goes_live_from_the_first_changed_answer_and_show_json_keeps_it(
    openai_server: OpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write(tmp_path, openai_server, monkeypatch, 2)
    assert (
        aieval(capsys, monkeypatch, tmp_path, "run", "eval.yaml", "--db", "r.db", "-q").returncode
        == 0
    )
    (live_id,) = stored(tmp_path)

    def changed(body: Any) -> Any:
        reply = responder(body)
        if body["model"] == "target-model" and reply.text.startswith("Your order is"):
            return Reply(reply.text.replace("Your order is", "Order status:"))
        return reply

    openai_server.responder = changed
    asked = len(openai_server.requests)
    done = aieval(
        capsys, monkeypatch, tmp_path, "run", "eval.yaml", "--db", "r.db", "-q",
        "--replay", live_id, "--replay-mode", "branch",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    branch_id = next(reversed(stored(tmp_path)))
    assert through_the_sdk(openai_server.requests[asked:])
    shown = aieval(capsys, monkeypatch, tmp_path, "show", branch_id, "--db", "r.db", "--json")
    samples = {s["id"]: s for s in json.loads(shown.stdout)["samples"]}
    record = Conversation.from_dict(samples["order-1"]["conversation"])
    assert record.branched_at == 4  # user, tool request, tool result, then the changed answer
    assert (
        record.turns[3].content == "Order status: shipped-1." and record.turns[3].source == "live"
    )
    assert (
        "ended: user_done; branched at turn 4"
        in aieval(capsys, monkeypatch, tmp_path, "show", branch_id, "--db", "r.db").stdout
    )


def test_replay_options_on_an_eval_that_plays_no_conversations_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A usage error (exit 2) naming the file and what to do; no run is stored."""
    (tmp_path / "qa.jsonl").write_text('{"input": "q", "expected": "a", "prediction": "a"}\n')
    (tmp_path / "eval.yaml").write_text(
        "name: qa\ndataset: qa.jsonl\nscorers: [exact_match]\n", encoding="utf-8"
    )
    cases = {
        ("--replay", "RUN"): "eval.yaml: --replay applies to conversation evals, and this one "
        "has no `conversation:` key (its rows are not scenarios)",
        ("--replay-mode", "all"): "eval.yaml: --replay-mode applies to a replay: give the run "
        "to replay (--replay RUN",
        ("--estimate",): "eval.yaml: --estimate applies to conversation evals, and this one has "
        "no `conversation:` key",
        ("--replay", "RUN", "--estimate"): "eval.yaml: --replay applies to conversation evals",
    }
    for options, said in cases.items():
        done = aieval(capsys, monkeypatch, tmp_path, "run", "eval.yaml", "--db", "r.db", *options)
        assert done.returncode == 2, options
        assert said in " ".join(done.stderr.split()), done.stderr
        assert "Traceback" not in done.stderr
    with Store(tmp_path / "r.db") as db:
        assert db.list_runs() == []


def test_a_replay_of_epochs_its_run_did_not_record_is_refused_before_a_run_is_stored(
    openai_server: OpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Epochs are played live: `--replay R --epochs 2` of a run played without epochs (and its
    reverse) is a usage error before anything is stored or called, never a run whose every
    sample misses; `--estimate` says the same."""
    write(tmp_path, openai_server, monkeypatch, 1)
    assert (
        aieval(capsys, monkeypatch, tmp_path, "run", "eval.yaml", "--db", "r.db", "-q").returncode
        == 0
    )
    (live_id,) = stored(tmp_path)
    asked = len(openai_server.requests)
    for more in ((), ("--estimate",)):
        done = aieval(
            capsys, monkeypatch, tmp_path, "run", "eval.yaml", "--db", "r.db", "-q",
            "--replay", live_id, "--epochs", "2", *more,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        said = " ".join(done.stderr.split())
        assert "the replayed run was played without epochs: epochs are played live" in said
        assert "run without --replay to play 2 epochs, or replay with --epochs 1" in said, said
        assert "Traceback" not in done.stderr
    assert list(stored(tmp_path)) == [live_id]
    assert len(openai_server.requests) == asked
    done = aieval(
        capsys, monkeypatch, tmp_path, "run", "eval.yaml", "--db", "r.db", "-q", "--epochs", "2"
    )
    assert done.returncode == 0, done.stderr
    epochs_id = next(reversed(stored(tmp_path)))
    done = aieval(
        capsys, monkeypatch, tmp_path, "run", "eval.yaml", "--db", "r.db", "-q",
        "--replay", epochs_id,
    )  # fmt: skip
    assert done.returncode == 2
    assert "played with epochs 1, 2" in " ".join(done.stderr.split())
    assert len(stored(tmp_path)) == 2
