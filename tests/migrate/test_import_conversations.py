"""``aieval import deepeval`` and ``aieval import promptfoo`` on conversations: the real files
in tests/conformance/deepeval/ and promptfoo_conversations/ become scenarios the project's
loader reads and ``aieval run`` plays offline; a hostile file chooses no code, endpoint, key or
file, and the report names each field left out."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.conversations._fake import no_connections
from tests.support.openai_server import OpenAIServer

from aieval import Store
from aieval.conversations import load_scenarios, run_conversations
from aieval.core import Conversation
from aieval.errors import ConfigError
from aieval.migrate import import_deepeval, import_promptfoo_conversations, is_conversation_config

AIEVAL = [sys.executable, "-m", "aieval"]
CONFORMANCE = Path(__file__).resolve().parents[1] / "conformance"
DEEPEVAL = CONFORMANCE / "deepeval"
PROMPTFOO = CONFORMANCE / "promptfoo_conversations"
HOSTILE = ("os:system", "http://169.254.169.254", "/etc/passwd", "EVIL_KEY", "steal.py")


def _items(name: str) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((DEEPEVAL / name).read_text(encoding="utf-8"))
    return data


def _turns(item: dict[str, Any]) -> list[dict[str, Any]]:
    turns = item["turns"]
    found: list[dict[str, Any]] = json.loads(turns) if isinstance(turns, str) else turns
    return found


def _written(folder: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in sorted(folder.iterdir()))


@pytest.mark.parametrize("name", ["convo_goldens.json", "goldens_multi_turn.json"])
def test_each_real_deepeval_file_imports_into_scenarios_the_loader_reads(
    tmp_path: Path, name: str
) -> None:
    result = import_deepeval(DEEPEVAL / name, tmp_path / "out")
    items = _items(name)
    scenarios = list(load_scenarios(result.scenarios))
    assert len(scenarios) == result.count == len(items)
    for item, scenario in zip(items, scenarios, strict=True):
        assert scenario.goal == item["scenario"]
        assert scenario.persona == item.get("user_description", "")
        said = [t["content"] for t in _turns(item) if t["role"] == "user"]
        assert list(scenario.user_turns) == said
        assert scenario.metadata["expected_outcome"] == item["expected_outcome"]
    assert result.recorded is not None
    report = (tmp_path / "out" / "import-report.md").read_text(encoding="utf-8")
    assert report == result.text() and "`scenario` -> goal" in report
    assert "`expected_outcome` -> metadata.expected_outcome" in report


@pytest.mark.parametrize("name", ["convo_goldens.json", "goldens_multi_turn.json"])
def test_the_finished_deepeval_conversations_replay_from_their_records_with_no_call(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each finished conversation is written as a record; replayed in ``all`` mode it gives
    DeepEval's turns back, byte for byte, with no connection (a golden still to be played,
    its last user turn unanswered, has no record and says so)."""
    result = import_deepeval(DEEPEVAL / name, tmp_path / "out")
    assert result.recorded is not None
    lines = result.recorded.read_text(encoding="utf-8").splitlines()
    records = [Conversation.from_json(line) for line in lines]
    recorded = {r.scenario_id for r in records}
    scenarios = [s for s in load_scenarios(result.scenarios) if s.id in recorded]
    with no_connections(monkeypatch) as attempts:
        played = asyncio.run(run_conversations(scenarios, None, records=records, mode="all"))
    assert attempts == []
    items = {
        s.id: item for s, item in zip(load_scenarios(result.scenarios), _items(name), strict=True)
    }
    for conversation in played:
        assert conversation.outcome.stop_reason == "script_end", conversation.outcome
        said = [(t.role, t.content) for t in conversation.turns]
        assert said == [(t["role"], t["content"]) for t in _turns(items[conversation.scenario_id])]
    unfinished = len(_items(name)) - len(records)
    assert ("the conversation is still to be played" in result.text()) == (unfinished > 0)


@pytest.mark.slow
def test_imported_scenarios_run_offline_through_aieval_run(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    """The imported eval file, once the author sets the target (here a model on loopback that
    echoes), plays each scenario's scripted turns through ``aieval run``."""
    done = subprocess.run(
        [*AIEVAL, "import", "deepeval", str(DEEPEVAL / "goldens_multi_turn.json"), "-o", "out"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "## Not translated" in done.stdout and "imported, incomplete" in done.stderr
    eval_path = tmp_path / "out" / "eval.yaml"
    doc = yaml.safe_load(eval_path.read_text(encoding="utf-8"))
    assert "target" not in doc  # the import chose none: the author sets it
    doc["target"] = {
        "provider": "openai-compatible",
        "model": "assistant",
        "base_url": openai_server.base_url,
    }
    eval_path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    db = tmp_path / "runs.db"
    ran = subprocess.run(
        [*AIEVAL, "run", str(eval_path), "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    items = _items("goldens_multi_turn.json")
    with Store(db) as store:
        (run,) = store.list_runs()
        samples = list(store.iter_samples(run.id, texts=False))
    assert len(samples) == len(items)
    for sample in samples:
        record = Conversation.from_dict(sample.extra["conversation"])
        item = items[int(sample.id.rsplit("-", 1)[1]) - 1]
        said = [t["content"] for t in _turns(item) if t["role"] == "user"]
        assert [t.content for t in record.turns if t.role == "user"] == said
        assert all(t.source == "scripted" for t in record.turns if t.role == "user")
        assert sum(t.role == "assistant" for t in record.turns) == len(said)
        assert record.outcome.stop_reason == "script_end"


def test_the_real_simulated_user_example_becomes_scenarios_with_no_target_chosen(
    tmp_path: Path,
) -> None:
    config = PROMPTFOO / "simulated_user_custom_provider.yaml"
    assert is_conversation_config(config)
    result = import_promptfoo_conversations(config, tmp_path / "out")
    scenarios = list(load_scenarios(result.scenarios))
    source = yaml.safe_load(config.read_text(encoding="utf-8"))
    assert [s.goal for s in scenarios] == [t["vars"]["instructions"] for t in source["tests"]]
    assert {s.max_turns for s in scenarios} == {4}
    assert scenarios[0].metadata["vars"]["workflow_id"] == "wf-booking-001"
    assert [a["type"] for a in scenarios[0].metadata["promptfoo_assert"]] == [
        "contains",
        "contains",
        "llm-rubric",
    ]
    doc = yaml.safe_load(result.eval_file.read_text(encoding="utf-8"))
    # the agent is file://provider.py (code): never carried over; the user's provider neither
    assert "target" not in doc and doc["conversation"] == {}
    text = result.text()
    assert "providers[0]: `file://provider.py`" in text
    # promptfoo sends the prompt as the system message: with no target to carry it, it is named
    assert "prompts[0]: `prompt (the system message)`" in text
    assert "system_prompt" in result.to_set[0]
    assert any(line.startswith("conversation.user") for line in result.to_set)
    assert not result.complete


def test_the_real_conversation_id_example_becomes_one_scenario_per_thread(
    tmp_path: Path,
) -> None:
    config = PROMPTFOO / "multiple_turn_conversation.yaml"
    assert is_conversation_config(config)
    result = import_promptfoo_conversations(config, tmp_path / "out")
    scenarios = {s.id: s for s in load_scenarios(result.scenarios)}
    assert list(scenarios) == ["facebook-thread", "weather-thread", "food-thread"]
    assert scenarios["facebook-thread"].user_turns == (
        "Who founded Facebook?",
        "Where does he live?",
        "Which state is that in?",
    )
    assert scenarios["weather-thread"].user_turns == (
        "What's the weather like in San Francisco?",
        "Do I need an umbrella today?",
    )
    doc = yaml.safe_load(result.eval_file.read_text(encoding="utf-8"))
    assert doc["target"] == {
        "provider": "openai",
        "model": "gpt-4.1-mini",
        "system_prompt": "You are a helpful assistant",
    }
    assert "`prompt (the system message)` -> target.system_prompt" in result.text()
    assert result.complete, result.text()


def test_a_plain_promptfoo_config_is_not_taken_for_conversations(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "prompts": ["Answer {{q}}"],
                "providers": ["openai:gpt-4o-mini"],
                "tests": [{"vars": {"q": "hi"}, "assert": [{"type": "contains", "value": "h"}]}],
            }
        ),
        encoding="utf-8",
    )
    assert not is_conversation_config(config)


def test_jsonl_and_a_test_runs_conversational_test_cases_import(tmp_path: Path) -> None:
    """``save_as("jsonl")`` writes a golden a line; a test run's file holds
    ``conversationalTestCases`` with camelCase names and results; a test case may have no
    scenario (its expected outcome is then the goal)."""
    items = _items("goldens_multi_turn.json")[:2]
    lines = tmp_path / "goldens.jsonl"
    lines.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    from_lines = import_deepeval(lines, tmp_path / "a")
    assert [s.goal for s in load_scenarios(from_lines.scenarios)] == [i["scenario"] for i in items]
    case = {
        "name": "refund",
        "success": False,
        "metricsData": [{"name": "Role Adherence", "score": 0.2}],
        "expectedOutcome": "The kettle is refunded",
        "userDescription": "an angry customer",
        "chatbotRole": "a support agent",
        "turns": [
            {"role": "user", "content": "Refund my kettle", "retrievalContext": ["policy"]},
            {
                "role": "assistant",
                "content": "Done",
                "toolsCalled": [
                    {"name": "refund", "inputParameters": {"order": 7}, "output": "refunded"}
                ],
            },
        ],
    }
    run = tmp_path / "latest_test_run.json"
    run.write_text(json.dumps({"testCases": [], "conversationalTestCases": [case]}), "utf-8")
    result = import_deepeval(run, tmp_path / "b")
    (scenario,) = load_scenarios(result.scenarios)
    assert scenario.id == "refund" and scenario.goal == "The kettle is refunded"
    assert scenario.persona == "an angry customer" and scenario.user_turns == ("Refund my kettle",)
    assert scenario.metadata["chatbot_role"] == "a support agent"
    assert scenario.tools[0].result_for({"order": 7}) == "refunded"
    left = {t.field: t.note for t in result.untranslated}
    assert "earlier DeepEval run" in left["metrics_data"] and "turns[].retrieval_context" in left
    assert result.recorded is not None
    (record,) = [Conversation.from_json(x) for x in result.recorded.read_text("utf-8").splitlines()]
    assert [(t.role, t.content) for t in record.turns] == [
        ("user", "Refund my kettle"),
        ("assistant", ""),
        ("tool", "refunded"),
        ("assistant", "Done"),
    ]
    assert record.turns[1].tool_calls[0].arguments == '{"order": 7}'
    (replayed,) = asyncio.run(run_conversations([scenario], None, records=[record], mode="all"))
    assert replayed.transcript() == record.transcript()


def test_simulated_user_settings_and_a_plain_conversation_prompt(tmp_path: Path) -> None:
    """``instructions`` in the provider's config is a template over the test's variables;
    ``initialMessages`` open the scenario (a system message is named, not kept); ``stateful``
    is named; tests without ``conversationId`` under a prompt reading ``_conversation`` are
    one conversation, the prompt's text (its loop taken out) each test's user turn."""
    folder = tmp_path / "pf"
    folder.mkdir()
    simulated = folder / "simulated.yaml"
    simulated.write_text(
        yaml.safe_dump(
            {
                "prompts": ["You are a travel agent."],
                "providers": [{"id": "openai:chat:gpt-4o", "config": {"temperature": 0}}],
                "defaultTest": {
                    "provider": {
                        "id": "promptfoo:simulated-user",
                        "config": {
                            "instructions": "You want to fly to {{city}}.",
                            "maxTurns": 2,
                            "stateful": True,
                            "initialMessages": [
                                {"role": "system", "content": "be terse"},
                                {"role": "user", "content": "I pay with {{card}}"},
                                {"role": "assistant", "content": "Noted."},
                            ],
                        },
                    }
                },
                "tests": [
                    {"vars": {"city": "Oslo", "card": "visa"}},
                    {
                        "vars": {"city": "Rome", "card": "amex"},
                        "options": {"transform": "output.trim()"},
                        "threshold": 0.5,
                    },
                    {"provider": "openai:gpt-4o", "vars": {"q": "one prompt, one answer"}},
                ],
            }
        ),
        encoding="utf-8",
    )
    result = import_promptfoo_conversations(simulated, tmp_path / "a")
    scenario, rome = load_scenarios(result.scenarios)
    assert rome.goal == "You want to fly to Rome."
    named = {
        (place, t.field)
        for t in result.untranslated
        for place in t.where.split(": ", 1)[1].split("; ")
    }
    assert {("tests[1]", "options.transform"), ("tests[1]", "threshold")} <= named
    assert ("tests[2]", "(test)") in named  # an ordinary test is named, never dropped silently
    assert scenario.goal == "You want to fly to Oslo." and scenario.max_turns == 2
    assert [(m.role, m.content) for m in scenario.initial_messages] == [
        ("user", "I pay with visa"),
        ("assistant", "Noted."),
    ]
    left = {t.field for t in result.untranslated}
    assert {"stateful", "role"} <= left
    doc = yaml.safe_load(result.eval_file.read_text(encoding="utf-8"))
    assert doc["target"] == {
        "provider": "openai",
        "model": "gpt-4o",
        "params": {"temperature": 0},
        "system_prompt": "You are a travel agent.",
    }
    plain = folder / "plain.yaml"
    loop = "{% for c in _conversation %}{{ c.input }} {{ c.output }}{% endfor %}"
    plain.write_text(
        yaml.safe_dump(
            {
                "prompts": [loop + "Q: {{q}}"],
                "providers": ["openai:gpt-4o-mini"],
                "tests": [{"vars": {"q": "one"}}, {"vars": {"q": "two"}}],
            }
        ),
        encoding="utf-8",
    )
    assert is_conversation_config(plain)
    result = import_promptfoo_conversations(plain, tmp_path / "b")
    (scenario,) = load_scenarios(result.scenarios)
    assert scenario.id == "conversation" and scenario.user_turns == ("Q: one", "Q: two")


HOSTILE_DEEPEVAL: list[dict[str, Any]] = [
    {
        "scenario": "Refund a broken kettle",
        "user_description": "a customer",
        "function": "os:system",
        "model_callback": "os:system",
        "base_url": "http://169.254.169.254",
        "api_key_env": "EVIL_KEY",
        "path": "/etc/passwd",
        "persona": {"characteristics": "calm", "voice": "steal.py"},
        "turns": [
            {"role": "user", "content": "My kettle broke", "url": "http://169.254.169.254"},
            {
                "role": "assistant",
                "content": "Sorry to hear that",
                "tools_called": [
                    {"name": "lookup", "input_parameters": {"id": 1}, "output": {"ok": True}}
                ],
            },
        ],
    }
]


def test_a_hostile_deepeval_file_is_written_inert_and_each_field_named(tmp_path: Path) -> None:
    source = tmp_path / "hostile.json"
    source.write_text(json.dumps(HOSTILE_DEEPEVAL), encoding="utf-8")
    result = import_deepeval(source, tmp_path / "out")
    written = _written(tmp_path / "out").replace(result.text(), "")
    for value in HOSTILE:
        assert value not in written, value
    untranslated = {(t.where, t.field) for t in result.untranslated}
    for field in ("function", "model_callback", "base_url", "api_key_env", "path"):
        assert ("hostile.json: [1]", field) in untranslated
    assert ("hostile.json: [1]", "persona.voice") in untranslated
    assert ("hostile.json: [1]", "turns[].url") in untranslated
    # the tool's recorded result is data for the target's call, never a function to run
    (scenario,) = load_scenarios(result.scenarios)
    assert scenario.tools[0].result_for({"id": 1}) == '{"ok": true}'
    assert scenario.persona == "calm"


@pytest.mark.parametrize(
    ("turns", "named"),
    [
        ([{"role": "system", "content": "x"}], r"hostile\.json: \[1\]\.turns\[0\]\.role"),
        ([{"role": "user", "content": 3}], r"hostile\.json: \[1\]\.turns\[0\]\.content"),
        ("[not json", r"hostile\.json: \[1\]\.turns: not a JSON list"),
    ],
)
def test_a_malformed_turn_is_refused_naming_file_item_and_field(
    tmp_path: Path, turns: Any, named: str
) -> None:
    source = tmp_path / "hostile.json"
    source.write_text(json.dumps([{"scenario": "s", "turns": turns}]), encoding="utf-8")
    with pytest.raises(ConfigError, match=named):
        import_deepeval(source, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_key_given_twice_is_refused_and_a_persona_that_is_no_object_named(
    tmp_path: Path,
) -> None:
    """JSON keeps the last of two keys silently; DeepEval would too: the import refuses."""
    twice = tmp_path / "twice.json"
    twice.write_text('[{"scenario": "refund", "scenario": "steal"}]', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"twice\.json: not JSON: duplicate key 'scenario'"):
        import_deepeval(twice, tmp_path / "out")
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps([{"scenario": "refund", "persona": "os:system"}]), "utf-8")
    result = import_deepeval(odd, tmp_path / "out")
    assert ("odd.json: [1]", "persona") in {(t.where, t.field) for t in result.untranslated}
    assert "os:system" not in result.scenarios.read_text(encoding="utf-8")


def test_a_file_without_conversations_is_refused_with_why(tmp_path: Path) -> None:
    source = tmp_path / "single.json"
    source.write_text(json.dumps([{"input": "hi", "expected_output": "hello"}]), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"no conversation to import.*single-turn golden"):
        import_deepeval(source, tmp_path / "out")


HOSTILE_PROMPTFOO: dict[str, Any] = {
    "prompts": ["You are a support agent."],
    "providers": [
        {"id": "openai:gpt-4o-mini", "config": {"apiBaseUrl": "http://169.254.169.254"}},
        "file://steal.py",
    ],
    "defaultTest": {
        "provider": {
            "id": "promptfoo:simulated-user",
            "config": {
                "maxTurns": 3,
                "apiBaseUrl": "http://169.254.169.254",
                "apiKeyEnvar": "EVIL_KEY",
                "provider": {"id": "file://steal.py"},
            },
        }
    },
    "tests": [
        {
            "description": "kind",
            "vars": {"instructions": "You want a refund for {{item}}", "item": "a kettle"},
        },
        {
            "description": "reads a file",
            "provider": {
                "id": "promptfoo:simulated-user",
                "config": {"instructions": "file:///etc/passwd"},
            },
        },
        {"description": "runs code", "provider": {"id": "file://steal.py"}, "vars": {"q": "x"}},
    ],
}


def test_a_hostile_promptfoo_config_chooses_no_endpoint_code_or_file(tmp_path: Path) -> None:
    folder = tmp_path / "pf"
    folder.mkdir()
    config = folder / "promptfooconfig.yaml"
    config.write_text(yaml.safe_dump(HOSTILE_PROMPTFOO), encoding="utf-8")
    result = import_promptfoo_conversations(config, tmp_path / "out")
    written = _written(tmp_path / "out").replace(result.text(), "")
    for value in HOSTILE:
        assert value not in written, value
    (scenario,) = load_scenarios(result.scenarios)
    assert scenario.goal == "You want a refund for a kettle" and scenario.max_turns == 3
    doc = yaml.safe_load(result.eval_file.read_text(encoding="utf-8"))
    assert "target" not in doc and doc["conversation"] == {}
    left = {(t.field, t.note) for t in result.untranslated}
    fields = {field for field, _ in left}
    for field in ("provider.config.apiBaseUrl", "provider.config.apiKeyEnvar"):
        assert field in fields
    assert "provider.config.provider" in fields and "file://steal.py" in fields
    assert any("file:// references are not read" in note for _, note in left)
    assert any("--allow-endpoints" in note for _, note in left)


def test_a_variable_read_from_outside_the_configurations_folder_is_refused(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "pf"
    folder.mkdir()
    config = folder / "promptfooconfig.yaml"
    doc = {**HOSTILE_PROMPTFOO, "tests": [{"vars": {"instructions": "file:///etc/passwd"}}]}
    config.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"promptfooconfig\.yaml: tests\[0\]: vars\.instructions"):
        import_promptfoo_conversations(config, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_the_command_dispatches_conversations_and_refuses_a_second_import(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "AIEVAL_DB"}
    config = PROMPTFOO / "multiple_turn_conversation.yaml"
    command = [*AIEVAL, "import", "promptfoo", str(config), "-o", str(tmp_path / "out")]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "promptfoo conversations imported" in done.stdout and "imported:" in done.stderr
    again = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 2
    assert "already holds" in again.stderr and "Traceback" not in again.stderr
