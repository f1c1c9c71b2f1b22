"""Produce real OTLP trace files: the instrumented app (its own process) against a loopback chat
server that answers with tool calls, exporting to a loopback OTLP receiver."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.openai_server import Behaviour, Malformed, OpenAIServer, Reply, Status
from tests.traces._receiver import OtlpReceiver

__all__ = ["MODEL", "Produced", "produce", "run_app"]

APP = Path(__file__).with_name("_agent_app.py")
MODEL = "gpt-4o-mini-2024-07-18"
_TAG = re.compile(r"\[(\w+)\] \[(\w+)\]")
_CALLS = {
    "ok": [("get_order", {"order_id": "A1042"})],
    "forbidden": [("delete_account", {"order_id": "A1042"})],
    "bad_args": [("get_order", {"order_id": 1042})],
    "unexecuted": [("get_order", {"order_id": "A1042"}), ("issue_refund", {"order_id": "A1042"})],
    "no_content": [("get_order", {"order_id": "A1042"})],
}
_TEXT = {
    "triage": "route: billing",
    "billing": "Order A1042 was charged twice; refund issued.",
    "writer": "Your refund for order A1042 is on its way.",
}


def _tool_calls(calls: list[tuple[str, dict[str, Any]]]) -> Behaviour:
    """A chat completion asking for tool calls (a raw body: the server's Reply is text only)."""
    body = {
        "id": "chatcmpl-tools",
        "object": "chat.completion",
        "created": 1,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": f"call_{i}_{name}",
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(args)},
                        }
                        for i, (name, args) in enumerate(calls)
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 50, "completion_tokens": 12, "total_tokens": 62},
    }
    return Malformed(json.dumps(body).encode())


def respond(body: Any) -> Behaviour:
    """Script by the tag the app puts in its first message: ``[scenario] [agent]``."""
    messages = body["messages"]
    scenario, agent = _TAG.search(str(messages[0]["content"])).groups()  # type: ignore[union-attr]
    if agent == "billing" and messages[-1]["role"] != "tool":
        if scenario == "llm_error":
            return Status(500)
        if scenario in _CALLS or scenario == "killed":
            return _tool_calls(_CALLS.get(scenario, _CALLS["ok"]))
    return Reply(_TEXT[agent], usage=(40, 10), model=MODEL)


@dataclass(frozen=True)
class Produced:
    """The files written and each scenario's trace id."""

    json_file: Path
    proto_file: Path
    trace_ids: dict[str, str]


def produce(
    folder: Path, conventions: str, scenarios: list[str], *, capture_content: bool = True
) -> Produced:
    """Run the app for ``scenarios`` (one trace each); the receiver's files hold the traces.
    ``capture_content=False`` leaves the instrumentation's content switch at its default."""
    folder.mkdir(parents=True, exist_ok=True)
    with OtlpReceiver(folder) as receiver:
        ids = run_app(receiver.endpoint, conventions, scenarios, capture_content=capture_content)
    return Produced(receiver.json_file, receiver.proto_file, ids)


def run_app(
    endpoint: str,
    conventions: str,
    scenarios: list[str],
    token: str | None = None,
    *,
    capture_content: bool = True,
) -> dict[str, str]:
    """Run the app exporting to ``endpoint`` (with a bearer ``token``); each scenario's trace id."""
    env = {
        **os.environ,
        "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only",
    }
    if not capture_content:
        env.pop("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
    if token is not None:
        env["OTEL_EXPORTER_OTLP_TRACES_HEADERS"] = f"Authorization=Bearer%20{token}"
    with OpenAIServer() as chat:
        chat.responder = respond
        done = subprocess.run(
            [sys.executable, str(APP), chat.base_url, endpoint, conventions, *scenarios],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
    assert done.returncode == 0, done.stderr
    return dict(line.split() for line in done.stdout.splitlines() if line.strip())
