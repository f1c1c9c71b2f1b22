"""``--replay PATH.jsonl`` and ``replay:`` read a records file (an import's ``recorded.jsonl``):
its conversations replay as a stored run's do, a scenario it lacks fails closed, and the file is
data, validated line by line before the run starts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.conversations._fake import no_connections
from tests.support.cli import run_main

from aieval import Store
from aieval.conversations import estimate_run, records_from_file
from aieval.core import Conversation
from aieval.errors import ConfigError
from aieval.migrate import import_deepeval
from aieval.runner import load_eval, run_eval

DEEPEVAL = Path(__file__).resolve().parents[1] / "conformance" / "deepeval"


def _imported(folder: Path) -> tuple[Path, list[str]]:
    """The real DeepEval goldens imported into ``folder``: its eval file and record lines."""
    result = import_deepeval(DEEPEVAL / "convo_goldens.json", folder)
    assert result.recorded is not None
    return folder / "eval.yaml", result.recorded.read_text(encoding="utf-8").splitlines()


def test_aieval_run_replays_an_imported_records_file_and_a_missing_scenario_fails_closed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`aieval run --replay recorded.jsonl --replay-mode all`: every recorded conversation comes
    back byte for byte with no connection; the scenario whose line was removed fails closed,
    naming the scenario and the file, and is never played live."""
    eval_file, lines = _imported(tmp_path / "out")
    dropped = Conversation.from_json(lines[-1])
    (tmp_path / "out" / "recorded.jsonl").write_text("\n".join(lines[:-1]) + "\n", "utf-8")
    with no_connections(monkeypatch) as attempts:
        done = run_main(
            capsys,
            monkeypatch,
            "run",
            str(eval_file),
            "--replay",
            "out/recorded.jsonl",
            "--replay-mode",
            "all",
            "--db",
            "r.db",
            cwd=tmp_path,
        )
    assert attempts == []
    assert "Traceback" not in done.stderr and "15 samples" in done.stdout, done
    # the import names no check: no rate that would read as "all passed"
    assert "no checks: nothing scored" in done.stdout and "pass rate" not in done.stdout
    with Store(tmp_path / "r.db") as db:
        (run,) = db.list_runs()
        samples = {s.example_id: s for s in db.iter_samples(run.id)}
    assert len(samples) == len(lines)
    for line in lines[:-1]:
        record = Conversation.from_json(line)
        replayed = Conversation.from_dict(samples[record.scenario_id].extra["conversation"])
        assert replayed.transcript() == record.transcript()
        assert samples[record.scenario_id].error is None
    missed = samples[dropped.scenario_id]
    assert missed.error is not None and "ReplayMissError" in missed.error
    assert dropped.scenario_id in missed.error and "records file" in missed.error


def test_replay_in_the_eval_file_reads_a_records_file_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``replay: {run: recorded.jsonl}`` is read from the eval file's folder, whatever the
    working directory; the run completes with every conversation replayed."""
    eval_file, lines = _imported(tmp_path / "out")
    data = yaml.safe_load(eval_file.read_text(encoding="utf-8"))
    data["replay"] = {"run": "recorded.jsonl", "mode": "all"}
    eval_file.write_text(yaml.safe_dump(data), encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    (estimate,) = estimate_run(load_eval(eval_file), store=None)  # --estimate reads it too
    assert (estimate.mode, estimate.target_calls, estimate.conversations) == (
        "replay all",
        0,
        len(lines),
    )
    with no_connections(monkeypatch) as attempts:
        (result,) = run_eval(load_eval(eval_file), store=tmp_path / "r.db")
    assert attempts == [] and result.status == "completed"
    assert (result.summary.samples, result.summary.passed) == (len(lines), len(lines))


def _record(**changes: Any) -> dict[str, Any]:
    record = Conversation.from_json(_imported_line()).to_dict()
    record.update(changes)
    return record


def _imported_line() -> str:
    text = (DEEPEVAL / "convo_goldens.json").read_text(encoding="utf-8")
    first = json.loads(text)[0]
    turns = json.loads(first["turns"]) if isinstance(first["turns"], str) else first["turns"]
    said = [
        {"role": t["role"], "content": t["content"], "source": "scripted", "tool_calls": []}
        for t in turns
        if t["role"] in ("user", "assistant")
    ]
    outcome = {"stop_reason": "script_end", "completed": True}
    return json.dumps({"scenario_id": "golden-1", "epoch": 0, "turns": said, "outcome": outcome})


def _with_turn_key(key: str, value: Any) -> str:
    record = _record()
    record["turns"][0][key] = value
    return json.dumps(record)


def _with_call_key() -> str:
    record = _record()
    call = {
        "id": "c1",
        "name": "lookup",
        "arguments": "{}",
        "result": "ok",
        "function": "os:system",
    }
    record["turns"][0]["tool_calls"] = [call]
    return json.dumps(record)


BAD_LINES = {
    "not JSON": ("{not json", "not a JSON record"),
    "a key twice": ('{"scenario_id": "a", "scenario_id": "b"}', "duplicate key 'scenario_id'"),
    "an endpoint": (lambda: json.dumps(_record(base_url="http://169.254.169.254")), "base_url"),
    "a key": (lambda: json.dumps(_record(api_key_env="EVIL_KEY")), "api_key_env"),
    "a target": (lambda: json.dumps(_record(target="os:system")), "target"),
    "a turn's endpoint": (lambda: _with_turn_key("url", "http://evil"), "turns[0].url"),
    "a tool call's code": (_with_call_key, "turns[0].tool_calls[0].function"),
    "a number not finite": (lambda: _with_turn_key("latency_s", float("nan")), "latency_s"),
    "a wrong field": (lambda: json.dumps(_record(epoch=-1)), "epoch"),
    "negative tokens": (
        lambda: _with_turn_key("usage", {"input_tokens": -5, "output_tokens": 1}),
        "turn 1.usage.input_tokens: -5 is out of range",
    ),
    "absurd tokens": (
        lambda: _with_turn_key("usage", {"input_tokens": 1, "output_tokens": 10**30}),
        f"turn 1.usage.output_tokens: {10**30} is out of range (0 to {2**63 - 1})",
    ),
    "fractional tokens": (
        lambda: _with_turn_key("usage", {"input_tokens": 1.5}),
        "turn 1.usage.input_tokens: expected a whole number",
    ),
    "negative retries": (
        lambda: _with_turn_key("usage", {"retries": -1}),
        "turn 1.usage.retries: -1 is out of range",
    ),
    "a negative cost": (
        lambda: _with_turn_key("usage", {"cost": -0.5}),
        "turn 1.usage.cost: -0.5 is negative",
    ),
    "a negative latency": (
        lambda: _with_turn_key("latency_s", -2.0),
        "turn 1.latency_s: -2.0 is negative",
    ),
    "too deep": ('{"a": ' * 100_000 + "1" + "}" * 100_000, "nested too deep"),
}


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_a_records_file_is_data_validated_line_by_line(tmp_path: Path, case: str) -> None:
    """A bad second line is refused before anything runs, naming the file, the line and the
    field: a record can name no endpoint, key, target or code."""
    bad, says = BAD_LINES[case]
    text = bad() if callable(bad) else bad
    path = tmp_path / "recorded.jsonl"
    path.write_text(_imported_line() + "\n" + text + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        records_from_file(path)
    assert f"{path}, line 2" in str(raised.value) and says in str(raised.value)


def test_a_records_file_refuses_a_repeat_non_utf8_an_empty_or_a_missing_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "recorded.jsonl"
    path.write_text(_imported_line() + "\n\n" + _imported_line() + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"line 3: scenario 'golden-1' epoch 0 is recorded again"):
        records_from_file(path)
    path.write_bytes(_imported_line().encode() + b"\n\xff\xfe\n")
    with pytest.raises(ConfigError, match="line 2: not UTF-8"):
        records_from_file(path)
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="no recorded conversation"):
        records_from_file(path)
    with pytest.raises(ConfigError, match="no such records file"):
        records_from_file(tmp_path / "absent.jsonl")
    path.write_text(_imported_line() + "\n", encoding="utf-8")
    assert list(records_from_file(path)) == [("golden-1", 0)]


def test_a_bad_records_file_stops_aieval_run_before_anything_is_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    eval_file, lines = _imported(tmp_path / "out")
    (tmp_path / "bad.jsonl").write_text(lines[0] + "\n" + _with_turn_key("url", "x"), "utf-8")
    done = run_main(
        capsys,
        monkeypatch,
        "run",
        str(eval_file),
        "--replay",
        "bad.jsonl",
        "--db",
        "r.db",
        cwd=tmp_path,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "bad.jsonl, line 2: turns[0].url: not a field" in done.stderr
    with Store(tmp_path / "r.db") as db:
        assert db.list_runs() == []


def test_estimate_warns_of_a_scenario_the_imported_records_lack(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real DeepEval multi-turn goldens: one is imported as a scenario without a record
    (it holds no answer to replay); `--estimate` says beforehand that it will fail closed, as
    the replay then does."""
    import_deepeval(DEEPEVAL / "goldens_multi_turn.json", tmp_path / "out")
    flags = ["--replay", "out/recorded.jsonl", "--replay-mode", "all", "--db", "r.db"]
    estimate = run_main(
        capsys, monkeypatch, "run", "out/eval.yaml", *flags, "--estimate", cwd=tmp_path
    )
    assert estimate.returncode == 0, estimate.stderr
    assert (
        "warning: 1 conversation without a record ('conversation-5'): each fails closed "
        "(ReplayMissError), nothing is called in its place"
    ) in estimate.stdout
    done = run_main(capsys, monkeypatch, "run", "out/eval.yaml", *flags, cwd=tmp_path)
    assert "scenario 'conversation-5'" in done.stdout and "ReplayMissError" in done.stdout
