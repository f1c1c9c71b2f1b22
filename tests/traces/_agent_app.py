"""A small multi-agent support app, instrumented as real apps are, run as its own process.

The ``openai`` client is instrumented by ``opentelemetry-instrumentation-openai-v2`` (GenAI
semantic conventions) or ``openinference-instrumentation-openai``; agent and tool spans are
opened with the OpenTelemetry SDK in the same conventions; spans leave through the OTLP/HTTP
exporter in small batches, so one trace spans several export requests.

Usage: ``python _agent_app.py CHAT_URL OTLP_ENDPOINT CONVENTIONS SCENARIO [SCENARIO...]``; it
prints each scenario's trace id. The scenario ``killed`` exports what has ended and exits while
its root span is still open; ``no_content`` records no input or output on its own spans, leaving
message content to the instrumentation.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any

import openai
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        },
    }
    for name in ("get_order", "issue_refund")
]
FLOWS = {"bad_handoff": ["triage", "writer", "billing"]}


def main(chat_url: str, endpoint: str, conventions: str, scenarios: list[str]) -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "support-app"}))
    provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint), max_export_batch_size=4)
    )
    if conventions == "genai":
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=provider)
    else:
        from openinference.instrumentation.openai import OpenAIInstrumentor as OIInstrumentor

        OIInstrumentor().instrument(tracer_provider=provider)
    client = openai.OpenAI(base_url=chat_url, api_key="test-key", max_retries=0)
    tracer = provider.get_tracer("support-app")
    for scenario in scenarios:
        with contextlib.suppress(openai.APIError):  # the spans record the failure
            run(tracer, client, conventions, scenario, provider)
    provider.shutdown()


def run(tracer: Any, client: Any, conventions: str, scenario: str, provider: Any) -> None:
    question = "I was charged twice for order A1042"
    with tracer.start_as_current_span("support workflow") as root:
        print(scenario, format(root.get_span_context().trace_id, "032x"), flush=True)
        if scenario != "no_content":  # an app that leaves content to the instrumentation
            _set_input(root, conventions, question)
        for agent in FLOWS.get(scenario, ["triage", "billing", "writer"]):
            with tracer.start_as_current_span(
                f"invoke_agent {agent}", attributes=_agent_attributes(conventions, agent)
            ) as span:
                text = _agent_turn(tracer, client, conventions, scenario, agent, question)
                if scenario != "no_content":
                    _set_output(span, conventions, text)
        if scenario == "killed":
            provider.force_flush()
            os._exit(0)


def _agent_turn(
    tracer: Any, client: Any, conventions: str, scenario: str, agent: str, question: str
) -> str:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": f"[{scenario}] [{agent}] {question}"}
    ]
    extra = {"tools": TOOLS} if agent == "billing" else {}
    if scenario == "ok" and agent == "billing":
        with tracer.start_as_current_span("cache lookup"):  # a span of no GenAI shape
            pass
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, **extra)
    message = reply.choices[0].message
    if not message.tool_calls:
        return str(message.content)
    messages.append(message.model_dump(exclude_none=True))
    executed = message.tool_calls[:1] if scenario == "unexecuted" else message.tool_calls
    for call in executed:
        with tracer.start_as_current_span(
            f"execute_tool {call.function.name}",
            attributes=_tool_attributes(conventions, call),
        ) as span:
            result = json.dumps({"order_id": "A1042", "status": "paid"})
            span.set_attribute(
                "gen_ai.tool.call.result" if conventions == "genai" else "output.value", result
            )
        messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, **extra)
    return str(reply.choices[0].message.content)


def _agent_attributes(conventions: str, agent: str) -> dict[str, Any]:
    if conventions == "genai":
        return {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent}
    return {"openinference.span.kind": "AGENT", "agent.name": agent}


def _tool_attributes(conventions: str, call: Any) -> dict[str, Any]:
    if conventions == "genai":
        return {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.function.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.call.arguments": call.function.arguments,
        }
    return {
        "openinference.span.kind": "TOOL",
        "tool.name": call.function.name,
        "tool_call.id": call.id,
        "input.value": call.function.arguments,
    }


def _set_input(span: Any, conventions: str, text: str) -> None:
    if conventions == "genai":
        message = [{"role": "user", "parts": [{"type": "text", "content": text}]}]
        span.set_attribute("gen_ai.input.messages", json.dumps(message))
    else:
        span.set_attribute("input.value", text)


def _set_output(span: Any, conventions: str, text: str) -> None:
    if conventions == "genai":
        message = [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]
        span.set_attribute("gen_ai.output.messages", json.dumps(message))
    else:
        span.set_attribute("output.value", text)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
