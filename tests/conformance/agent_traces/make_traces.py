"""Write the trace files of this folder with the real instrumentation libraries, offline.

Run ``python make_traces.py`` in a virtualenv with ``openai-agents``,
``opentelemetry-instrumentation-openai-v2``, ``opentelemetry-instrumentation-openai-agents-v2``,
``openinference-instrumentation-openai-agents``, ``opentelemetry-sdk`` and
``opentelemetry-exporter-otlp-proto-http`` (versions in README.md). Each program runs in its own
process against a scripted OpenAI-compatible chat server on 127.0.0.1 and exports its spans
through the SDK's own OTLP/HTTP exporter to a receiver on 127.0.0.1, which writes each export
request as one line of OTLP/JSON, as the OpenTelemetry Collector's file exporter does (ids in hex).

Programs (one file each, ``<program>.jsonl``):

* ``openai_v2_handoffs``: an app whose client is traced by the openai-v2 instrumentation, its
  ``invoke_agent support_agent`` span holding ``triage``, ``billing`` and ``writer`` agent spans
  one after the other (the orchestrator's own routing call included).
* ``openai_v2_delegation``: the same orchestrator; ``billing`` calls the ``check_refund_policy``
  tool, which runs ``policy_agent`` (an agent used as a tool).
* ``agents_sdk_otel_handoffs`` / ``agents_sdk_openinference_handoffs``: the OpenAI Agents SDK,
  ``triage`` hands off to ``billing`` (which calls ``get_order``), which hands off to ``writer``;
  bridged to OpenTelemetry by ``opentelemetry-instrumentation-openai-agents-v2`` (GenAI
  conventions) or ``openinference-instrumentation-openai-agents``.
* ``agents_sdk_otel_delegation`` / ``agents_sdk_openinference_delegation``: the Agents SDK,
  ``orchestrator`` calls ``policy_agent.as_tool(...)``.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

HERE = Path(__file__).parent
PROGRAMS = (
    "openai_v2_handoffs",
    "openai_v2_delegation",
    "agents_sdk_otel_handoffs",
    "agents_sdk_otel_delegation",
    "agents_sdk_openinference_handoffs",
    "agents_sdk_openinference_delegation",
)
MODEL = "gpt-4o-mini-2024-07-18"
QUESTION = "I was charged twice for order A1042"


# --- the scripted chat server --------------------------------------------------------------


def _tag(messages: list[dict[str, Any]]) -> str:
    """The agent a request is for: its system message starts with ``[agent]``."""
    for message in messages:
        content = str(message.get("content") or "")
        if content.startswith("["):
            return content[1 : content.index("]")]
    return ""


def _has_tool_result(messages: list[dict[str, Any]]) -> bool:
    """Whether a tool of this agent answered (a handoff's own tool message is not one)."""
    return any(
        m.get("role") == "tool" and "transfer_to_" not in str(m.get("tool_call_id"))
        for m in messages
    )


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted reply: a tool call or a text, chosen by agent and by what the chat holds."""
    messages = body["messages"]
    agent = _tag(messages)
    done = _has_tool_result(messages)
    script: dict[str, tuple[str, dict[str, Any]] | str] = {
        "support_agent": "plan: triage, then billing, then writer",
        "triage": ("transfer_to_billing", {}) if "tools" in body else "route: billing",
        "billing": (
            ("transfer_to_writer", {})
            if "transfer_to_writer" in str(body.get("tools"))
            else "Order A1042 was charged twice; refund issued."
        )
        if done
        else (
            ("check_refund_policy", {"input": "double charge on A1042"})
            if "check_refund_policy" in str(body.get("tools"))
            else ("get_order", {"order_id": "A1042"})
        ),
        "writer": "Your refund for order A1042 is on its way.",
        "policy_agent": "A double charge is refunded in full.",
        "orchestrator": "A double charge is refunded in full; yours is on its way."
        if done
        else ("check_refund_policy", {"input": "double charge on A1042"}),
    }
    step = script.get(agent, "ok")
    message: dict[str, Any]
    if isinstance(step, tuple):
        name, args = step
        call = {
            "id": f"call_{agent}_{name}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
    else:
        message, finish = {"role": "assistant", "content": step}, "stop"
    return {
        "id": f"chatcmpl-{agent}",
        "object": "chat.completion",
        "created": 1,
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 40, "completion_tokens": 10, "total_tokens": 50},
    }


class _Chat(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        data = json.dumps(answer(body)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


# --- the OTLP receiver -----------------------------------------------------------------------


def _collector_json(body: bytes) -> str:
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    data = MessageToDict(request)
    for resource in data.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return json.dumps(data, separators=(",", ":"))


class _Receiver(BaseHTTPRequestHandler):
    lines: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        _Receiver.lines.append(_collector_json(body))
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceResponse,
        )

        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: Any) -> None:
        pass


def _serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    chat, receiver = _serve(_Chat), _serve(_Receiver)
    chat_url = f"http://127.0.0.1:{chat.server_address[1]}/v1"
    endpoint = f"http://127.0.0.1:{receiver.server_address[1]}/v1/traces"
    env = dict(os.environ, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
    for program in PROGRAMS:
        _Receiver.lines = []
        done = subprocess.run(
            [sys.executable, __file__, program, chat_url, endpoint], env=env, check=False
        )
        if done.returncode != 0:
            raise SystemExit(f"{program} failed")
        (HERE / f"{program}.jsonl").write_text("".join(f"{line}\n" for line in _Receiver.lines))
        print(program, len(_Receiver.lines), "export requests")
    chat.shutdown()
    receiver.shutdown()


# --- the programs ----------------------------------------------------------------------------


def _provider(endpoint: str, service: str) -> Any:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    return provider


def openai_v2(chat_url: str, endpoint: str, delegation: bool) -> None:
    """An orchestrator opening agent and tool spans in the GenAI conventions itself, its client
    traced by the openai-v2 instrumentation (which records the ``chat`` spans)."""
    import openai
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    provider = _provider(endpoint, "support-app")
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    client = openai.OpenAI(base_url=chat_url, api_key="test-key", max_retries=0)
    tracer = provider.get_tracer("support-app")
    tools = [
        {
            "type": "function",
            "function": {
                "name": "check_refund_policy" if delegation else "get_order",
                "parameters": {"type": "object", "properties": {"input": {"type": "string"}}}
                if delegation
                else {"type": "object", "properties": {"order_id": {"type": "string"}}},
            },
        }
    ]

    def agent(name: str, ask: str, with_tools: bool = False) -> str:
        with tracer.start_as_current_span(
            f"invoke_agent {name}",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name},
        ) as span:
            messages: list[Any] = [
                {"role": "system", "content": f"[{name}]"},
                {"role": "user", "content": ask},
            ]
            extra = {"tools": tools} if with_tools else {}
            reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, **extra)
            message = reply.choices[0].message
            for call in message.tool_calls or []:
                messages.append(message.model_dump(exclude_none=True))
                with tracer.start_as_current_span(
                    f"execute_tool {call.function.name}",
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": call.function.name,
                        "gen_ai.tool.call.id": call.id,
                        "gen_ai.tool.call.arguments": call.function.arguments,
                    },
                ) as tool:
                    if call.function.name == "check_refund_policy":
                        result = agent("policy_agent", json.loads(call.function.arguments)["input"])
                    else:
                        result = json.dumps({"order_id": "A1042", "status": "paid"})
                    tool.set_attribute("gen_ai.tool.call.result", result)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
                reply = client.chat.completions.create(
                    model="gpt-4o-mini", messages=messages, **extra
                )
            text = str(reply.choices[0].message.content)
            out = [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]
            span.set_attribute("gen_ai.output.messages", json.dumps(out))
            return text

    with tracer.start_as_current_span(
        "invoke_agent support_agent",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support_agent"},
    ) as root:
        asked = [{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]
        root.set_attribute("gen_ai.input.messages", json.dumps(asked))
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[
                {"role": "system", "content": "[support_agent]"},
                {"role": "user", "content": QUESTION},
            ],
        )
        agent("triage", QUESTION)
        agent("billing", QUESTION, with_tools=True)
        text = agent("writer", QUESTION)
        out = [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]
        root.set_attribute("gen_ai.output.messages", json.dumps(out))
    provider.shutdown()


def agents_sdk(chat_url: str, endpoint: str, bridge: str, delegation: bool) -> None:
    """The OpenAI Agents SDK, its own tracing bridged to OpenTelemetry by ``bridge``."""
    from agents import (
        Agent,
        Runner,
        function_tool,
        set_default_openai_api,
        set_default_openai_client,
        set_trace_processors,
    )
    from openai import AsyncOpenAI

    provider = _provider(endpoint, "agents-sdk-app")
    set_trace_processors([])  # nothing goes to the OpenAI platform
    if bridge == "otel":
        from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    else:
        from openinference.instrumentation.openai_agents import (
            OpenAIAgentsInstrumentor as OIAgentsInstrumentor,
        )

        OIAgentsInstrumentor().instrument(tracer_provider=provider)
    set_default_openai_client(AsyncOpenAI(base_url=chat_url, api_key="k", max_retries=0), False)
    set_default_openai_api("chat_completions")

    @function_tool
    def get_order(order_id: str) -> str:
        """Look an order up."""
        return json.dumps({"order_id": order_id, "status": "paid"})

    if delegation:
        policy = Agent(name="policy_agent", instructions="[policy_agent]", model="m")
        first = Agent(
            name="orchestrator",
            instructions="[orchestrator]",
            model="m",
            tools=[policy.as_tool("check_refund_policy", "What the refund policy says.")],
        )
    else:
        writer = Agent(name="writer", instructions="[writer]", model="m")
        billing = Agent(
            name="billing",
            instructions="[billing]",
            tools=[get_order],
            handoffs=[writer],
            model="m",
        )
        first = Agent(name="triage", instructions="[triage]", handoffs=[billing], model="m")
    Runner.run_sync(first, QUESTION)
    provider.shutdown()


if __name__ == "__main__":
    if len(sys.argv) == 1:
        main()
    else:
        name, chat_url, endpoint = sys.argv[1:4]
        if name.startswith("openai_v2"):
            openai_v2(chat_url, endpoint, delegation=name.endswith("delegation"))
        else:
            bridge = "otel" if "_otel_" in name else "openinference"
            agents_sdk(chat_url, endpoint, bridge, delegation=name.endswith("delegation"))
