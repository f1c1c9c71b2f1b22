"""``import_deepeval``: DeepEval conversational goldens and test cases to scenarios.

DeepEval saves a conversational dataset (``EvaluationDataset.save_as("json" | "jsonl")``) as a
list of ``ConversationalGolden``: ``scenario``, ``turns`` (a list, or the same list as JSON
text in older files), ``expected_outcome``, ``user_description``, ``persona``, ``context``,
``name``, ``comments``, ``additional_metadata``, ``custom_column_key_values``. A
``ConversationalTestCase`` adds ``chatbot_role``, ``tags``, ``metadata``, ``mcp_servers``.

Each conversation becomes a scenario: ``scenario`` its goal, the persona (or
``user_description``) its persona, the user turns its scripted turns, the assistant's tool
calls recorded tool results, the rest kept in ``metadata``. The finished conversation (user
and assistant turns) is also written as a record (:class:`aieval.core.Conversation`). The file
is data: its fields are read from an allow-list; any other is reported, never written into
the eval file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aieval._json import loads_strict
from aieval._terminal import printable
from aieval.core import Conversation, ConversationOutcome, ToolCall, Turn
from aieval.errors import ConfigError
from aieval.migrate._convimport import (
    EVAL,
    RECORDED,
    SCENARIOS,
    ConversationImport,
    Lines,
    eval_text,
    slug,
    unique_id,
    write_import,
)

__all__ = ["import_deepeval"]

#: Largest file read (a dataset of conversations, not a dump)
MAX_READ = 50_000_000
#: where a golden's fields go (the rest of the fields DeepEval knows are reported)
_TO_METADATA = {
    "context": "metadata.context",
    "comments": "metadata.comments",
    "additional_metadata": "metadata.additional_metadata",
    "metadata": "metadata.metadata",
    "custom_column_key_values": "metadata.custom_column_key_values",
    "tags": "metadata.tags",
    "name": "metadata.name",
}
#: a test run's results: what DeepEval measured then, not what the scenario is
_RESULTS = "a result of an earlier DeepEval run; aieval scores each run itself"
_NOT_TRANSLATED = {
    "mcp_servers": "MCP servers are the target's own setup; give the target its tools",
    "flaky": "aieval runs each scenario alike; use epochs for repeated runs",
    "multimodal": "scenarios hold text turns",
    "voice": "scenarios hold text turns",
    "id": "DeepEval's platform id; the scenario's id is its name, else its position",
    "images_mapping": "scenarios hold text turns",
    "metrics_data": _RESULTS,
    "success": _RESULTS,
    "run_duration": _RESULTS,
    "evaluation_cost": _RESULTS,
    "order": "the scenarios keep the file's order",
}
#: a test run's file (``.deepeval/.latest_test_run.json``) names the same fields in camelCase
_ALIASES = {
    "expectedOutcome": "expected_outcome",
    "userDescription": "user_description",
    "chatbotRole": "chatbot_role",
    "additionalMetadata": "additional_metadata",
    "customColumnKeyValues": "custom_column_key_values",
    "mcpServers": "mcp_servers",
    "toolsCalled": "tools_called",
    "retrievalContext": "retrieval_context",
    "userId": "user_id",
    "mcpToolsCalled": "mcp_tools_called",
    "mcpResourcesCalled": "mcp_resources_called",
    "mcpPromptsCalled": "mcp_prompts_called",
    "latencyMs": "latency_ms",
    "imagesMapping": "images_mapping",
    "metricsData": "metrics_data",
    "runDuration": "run_duration",
    "evaluationCost": "evaluation_cost",
}
_TURN_FIELDS = {"role", "content", "tools_called"}
_TURN_NOT_TRANSLATED = {
    "retrieval_context": "a turn's retrieved context is the target's, made again each run",
    "user_id": "one simulated user per scenario",
    "mcp_tools_called": "MCP calls are not recorded tool results",
    "mcp_resources_called": "MCP calls are not recorded tool results",
    "mcp_prompts_called": "MCP calls are not recorded tool results",
    "additional_metadata": "a turn holds no metadata",
    "metadata": "a turn holds no metadata",
    "audio": "scenarios hold text turns",
    "latency_ms": "latencies are measured in each run",
    "interrupted": "scenarios hold text turns",
    "images": "scenarios hold text turns",
}
_PERSONA_TEXT = ("name", "characteristics")
#: the most user turns of a conversation still to simulate (DeepEval's simulator default)
_SIMULATED_TURNS = 10


def import_deepeval(
    path: str | os.PathLike[str], out: str | os.PathLike[str], *, overwrite: bool = False
) -> ConversationImport:
    """Translate a DeepEval conversational dataset (JSON or JSONL) into ``out``: a scenarios
    file, an eval file, the finished conversations as records, and ``import-report.md``.

    Raises:
        ConfigError: the file cannot be read, is not a list of conversations, or holds none;
            a turn is malformed (named by item and turn); ``out`` holds an earlier import
            (``overwrite``) or a link.
    """
    source, directory = Path(path), Path(out)
    try:
        items = _read(source)
        report = Lines(source)
        rows: list[dict[str, Any]] = []
        records: list[str] = []
        taken: set[str] = set()
        for index, item in enumerate(items, 1):
            found = _item(item, index, source, report, taken)
            if found is not None:
                rows.append(found[0])
                if found[1] is not None:
                    records.append(found[1].to_json() + "\n")
        if not rows:
            reasons = "; ".join(f"{t.where}: {t.note}" for t in report.lines()[1])
            raise ConfigError(f"{source}: no conversation to import: {reasons or 'no item'}")
        translated, untranslated = report.lines()
        to_set = ["target: the assistant under test (a provider's model, or a Python function)"]
        if len(records) < len(rows):
            to_set.append(
                "conversation.user: a simulated user on a provider you choose, for the "
                "conversations that are not finished (DeepEval's ConversationSimulator goldens: "
                "the simulated user goes on after their turns); without one they end when "
                "their scripted turns do"
            )
        result = ConversationImport(
            tool="DeepEval",
            source=source,
            directory=directory,
            scenarios=directory / SCENARIOS,
            eval_file=directory / EVAL,
            recorded=directory / RECORDED if records else None,
            count=len(rows),
            translated=translated,
            untranslated=untranslated,
            to_set=tuple(to_set),
        )
        name = slug(source.stem, "deepeval")
        write_import(result, rows, eval_text("deepeval", name, None), records, overwrite=overwrite)
        return result
    except ConfigError as exc:
        raise ConfigError(printable(str(exc))) from None


def _read(source: Path) -> list[Any]:
    try:
        size = source.stat().st_size
        if size > MAX_READ:
            raise ConfigError(f"{source}: {size:,} bytes, more than {MAX_READ:,}")
        text = source.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{source}: not UTF-8 text: {exc.reason}") from None
    except OSError as exc:
        raise ConfigError(f"{source}: cannot read: {exc.strerror or exc}") from None
    if source.suffix == ".jsonl":
        return [_json_text(line, f"{source}, line {n}") for n, line in _lines(text)]
    data = _json_text(text, str(source))
    if isinstance(data, Mapping):
        # a test run's file, or the platform's shape ({"conversationalGoldens": [...]})
        keys = ("conversationalTestCases", "conversationalGoldens", "goldens", "testCases")
        for key in keys:
            if isinstance(data.get(key), list):
                return list(data[key])
        raise ConfigError(
            f"{source}: expected a list of conversational goldens or test cases "
            "(EvaluationDataset.save_as), got an object"
        )
    if not isinstance(data, list):
        raise ConfigError(f"{source}: expected a list of conversational goldens or test cases")
    return data


def _lines(text: str) -> list[tuple[int, str]]:
    return [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]


def _json_text(text: str, label: str) -> Any:
    try:
        return loads_strict(text)
    except (ValueError, RecursionError) as exc:  # DuplicateKeyError is a ValueError
        raise ConfigError(f"{label}: not JSON: {exc or 'nested too deep'}") from None


def _snake(item: Mapping[str, Any]) -> dict[str, Any]:
    """``item`` with a test run's camelCase names as the dataset's (the first one wins)."""
    found: dict[str, Any] = {}
    for key, value in item.items():
        found.setdefault(_ALIASES.get(str(key), str(key)), value)
    return found


def _item(
    item: Any, index: int, source: Path, report: Lines, taken: set[str]
) -> tuple[dict[str, Any], Conversation | None] | None:
    where = f"[{index}]"
    if not isinstance(item, Mapping):
        report.not_mapped(where, "(item)", f"not an object but {type(item).__name__}")
        return None
    item = _snake(item)
    scenario = item.get("scenario")
    outcome = item.get("expected_outcome")
    if not _text(scenario) and _text(outcome) and item.get("turns"):
        # a ConversationalTestCase need not say its scenario: its expected outcome is the
        # nearest thing to a goal the simulated user could pursue
        report.mapped(where, "expected_outcome", "goal", "the test case has no scenario")
        scenario = outcome
    elif not _text(scenario):
        why = (
            "a single-turn golden (input, expected_output), not a conversation"
            if "input" in item
            else "no 'scenario' (a conversation's goal) and no turns with an expected_outcome"
        )
        report.not_mapped(where, "(item)", why)
        return None
    else:
        report.mapped(where, "scenario", "goal")
    name = item.get("name")
    wanted = slug(name, f"conversation-{index}") if isinstance(name, str) else ""
    row: dict[str, Any] = {"id": unique_id(wanted or f"conversation-{index}", taken)}
    row["goal"] = scenario
    persona = _persona(item, where, report)
    if persona:
        row["persona"] = persona
    metadata: dict[str, Any] = {"deepeval_item": index}
    if _text(outcome):
        metadata["expected_outcome"] = outcome
        report.mapped(
            where,
            "expected_outcome",
            "metadata.expected_outcome",
            "the text a goal check judges; a goal check is the author's Python "
            "(conversation.goal_checks, named by a row's stop.goal_check)",
        )
    role = item.get("chatbot_role")
    if isinstance(role, str) and role.strip():
        metadata["chatbot_role"] = role
        report.mapped(
            where,
            "chatbot_role",
            "metadata.chatbot_role",
            "the role DeepEval's role adherence reads; the target's system prompt is the "
            "author's (target.system_prompt)",
        )
    for key, value in item.items():
        if key in _TO_METADATA and value is not None:
            metadata[key] = _plain(value, f"{source}: {where}.{key}")
            report.mapped(where, str(key), _TO_METADATA[key])
            report.secrets(where, str(key), _TO_METADATA[key], value)
        elif key in _NOT_TRANSLATED and value not in (None, False, [], {}):
            report.not_mapped(where, str(key), _NOT_TRANSLATED[key])
        elif key not in {
            "scenario",
            "turns",
            "expected_outcome",
            "user_description",
            "persona",
            "chatbot_role",
            *_TO_METADATA,
            *_NOT_TRANSLATED,
        }:
            report.not_mapped(
                where,
                str(key),
                "not a field of a DeepEval conversation; left out (never read as code, "
                "an endpoint or a file)",
            )
    turns = _turns(item.get("turns"), f"{source}: {where}", where, report)
    record = _scripted(row, turns, where, report)
    row["metadata"] = metadata
    return row, record


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _persona(item: Mapping[str, Any], where: str, report: Lines) -> str:
    described = item.get("user_description")
    persona = item.get("persona")
    if persona is not None and not isinstance(persona, Mapping):
        report.not_mapped(where, "persona", "expected DeepEval's Persona object (characteristics)")
    if isinstance(persona, Mapping):
        parts = [str(persona[k]) for k in _PERSONA_TEXT if isinstance(persona.get(k), str)]
        for key in persona:
            if key not in _PERSONA_TEXT:
                report.not_mapped(
                    where, f"persona.{key}", "voice and behaviour settings of DeepEval's simulator"
                )
        if parts:
            report.mapped(where, "persona", "persona")
            if isinstance(described, str) and described.strip():
                report.not_mapped(
                    where, "user_description", "the persona is given, and DeepEval uses it"
                )
            return "\n".join(parts)
    if isinstance(described, str) and described.strip():
        report.mapped(where, "user_description", "persona")
        return described
    return ""


@dataclass(frozen=True, slots=True)
class _Turn:
    role: str
    content: str
    tools: tuple[tuple[str, dict[str, Any], str | None], ...] = ()


def _turns(value: Any, label: str, where: str, report: Lines) -> list[_Turn]:
    if value is None or value == "":
        return []
    if isinstance(value, str):  # older files hold the list as JSON text
        try:
            value = loads_strict(value)
        except (ValueError, RecursionError) as exc:
            raise ConfigError(f"{label}.turns: not a JSON list of turns: {exc}") from None
    if not isinstance(value, list):
        raise ConfigError(f"{label}.turns: expected a list of turns")
    found = []
    for n, turn in enumerate(value):
        here = f"{label}.turns[{n}]"
        if not isinstance(turn, Mapping):
            raise ConfigError(f"{here}: a turn is an object with role and content")
        turn = _snake(turn)
        role, content = turn.get("role"), turn.get("content")
        if role not in ("user", "assistant"):
            raise ConfigError(f"{here}.role: expected 'user' or 'assistant', got {role!r}")
        if not isinstance(content, str):
            raise ConfigError(f"{here}.content: expected text")
        for key, extra in turn.items():
            if key in _TURN_FIELDS or extra in (None, [], {}, ""):
                continue
            why = _TURN_NOT_TRANSLATED.get(
                str(key), "not a field of a DeepEval turn; left out (never read as code)"
            )
            report.not_mapped(where, f"turns[].{key}", why)
        tools = _tools(turn.get("tools_called"), here) if role == "assistant" else ()
        if role == "user" and turn.get("tools_called"):
            report.not_mapped(where, "turns[].tools_called", "a user turn calls no tool")
        found.append(_Turn(str(role), content, tools))
    return found


def _tools(value: Any, here: str) -> tuple[tuple[str, dict[str, Any], str | None], ...]:
    if not value:
        return ()
    if not isinstance(value, list):
        raise ConfigError(f"{here}.tools_called: expected a list of tool calls")
    calls = []
    for i, call in enumerate(value):
        if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
            raise ConfigError(f"{here}.tools_called[{i}]: a tool call has a name")
        arguments = call.get("input_parameters", call.get("inputParameters")) or {}
        if not isinstance(arguments, Mapping):
            raise ConfigError(f"{here}.tools_called[{i}].input_parameters: expected an object")
        output = call.get("output")
        result = None
        if output is not None:
            result = output if isinstance(output, str) else _json(output, f"{here}.output")
        calls.append((str(call["name"]), dict(arguments), result))
    return tuple(calls)


def _scripted(
    row: dict[str, Any], turns: list[_Turn], where: str, report: Lines
) -> Conversation | None:
    """The row's scripted turns and tool fixtures; the finished conversation as a record when
    its turns alternate as a replay plays them (user, then the assistant's answer)."""
    opening = 0
    while opening < len(turns) and turns[opening].role == "assistant":
        opening += 1
    if opening:
        row["initial_messages"] = [
            {"role": "assistant", "content": t.content} for t in turns[:opening]
        ]
        report.mapped(where, "turns (assistant, before any user turn)", "initial_messages")
    said = [t.content for t in turns[opening:] if t.role == "user"]
    rest = turns[opening:]
    alternate = all(t.role == ("user" if i % 2 == 0 else "assistant") for i, t in enumerate(rest))
    finished = bool(rest) and alternate and len(rest) % 2 == 0
    if said:
        row["user_turns"] = said
        report.mapped(where, "turns (user)", "user_turns (scripted, in order)")
    # a finished conversation is played as it was said; one still to simulate keeps
    # DeepEval's room for the simulated user's turns after the scripted ones
    row["max_turns"] = len(said) if finished else max(_SIMULATED_TURNS, len(said))
    _fixtures(row, turns, where, report)
    if not rest:
        return None
    if not alternate:
        report.not_mapped(
            where,
            "turns (assistant)",
            "the turns do not alternate user, assistant: a replay could not play them in "
            "order; no record written for this conversation",
        )
        return None
    if not finished:
        if any(t.role == "assistant" for t in rest):
            report.not_mapped(
                where,
                "turns (assistant)",
                "the last user turn has no answer: the conversation is still to be played, "
                "and the target answers each scripted turn anew; no record written for it",
            )
        else:
            report.mapped(
                where,
                "turns",
                "no record",
                "the last user turn has no answer: the conversation is still to be played",
            )
        return None
    report.mapped(where, "turns (assistant)", f"{RECORDED} (the record to replay from)")
    return _record(row["id"], turns)


def _fixtures(row: dict[str, Any], turns: list[_Turn], where: str, report: Lines) -> None:
    tools: dict[str, list[dict[str, Any]]] = {}
    for turn in turns:
        for name, arguments, result in turn.tools:
            calls = tools.setdefault(name, [])
            if result is None:
                report.not_mapped(where, "tools_called[].output", "no output: nothing to record")
                continue
            calls.append({"arguments": arguments, "result": result})
    if tools:
        row["tools"] = [{"name": name, "calls": calls} for name, calls in tools.items()]
        report.mapped(where, "tools_called", "tools (recorded results for these arguments)")


def _record(scenario_id: str, turns: list[_Turn]) -> Conversation:
    made: list[Turn] = []
    number = 0
    for turn in turns:
        if turn.role == "user" or not any(t.role == "user" for t in made):
            # user turns are scripted; so are the opening assistant messages (the engine
            # starts a conversation with the scenario's initial messages as scripted turns)
            made.append(Turn(turn.role, turn.content, "scripted"))  # type: ignore[arg-type]
            continue
        if turn.tools:
            calls = []
            for name, arguments, result in turn.tools:
                number += 1
                calls.append(
                    ToolCall(
                        f"call_{number}",
                        name,
                        json.dumps(arguments, ensure_ascii=False),
                        result,
                        None if result is not None else "DeepEval recorded no output",
                    )
                )
            made.append(Turn("assistant", "", "live", tuple(calls)))
            made += [Turn("tool", c.result or "", "scripted", tool_call_id=c.id) for c in calls]
        made.append(Turn("assistant", turn.content, "live"))
    return Conversation(scenario_id, 0, tuple(made), ConversationOutcome("script_end", True))


def _json(value: Any, label: str) -> str:
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{label}: not a plain JSON value: {exc}") from None


def _plain(value: Any, label: str) -> Any:
    _json(value, label)
    return value
