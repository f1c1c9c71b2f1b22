"""A triage -> billing app on the OpenAI Agents SDK, traced through
``openinference-instrumentation-openai-agents`` and the OTLP/HTTP exporter, run as its own
process. Usage: ``python _agents_sdk_app.py CHAT_URL OTLP_ENDPOINT``; prints the trace id."""

from __future__ import annotations

import json
import sys

from agents import (
    Agent,
    Runner,
    function_tool,
    set_default_openai_api,
    set_default_openai_client,
    set_trace_processors,
)
from openai import AsyncOpenAI
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor


@function_tool
def get_order(order_id: str) -> str:
    """Look an order up."""
    return json.dumps({"order_id": order_id, "status": "paid"})


def main(chat_url: str, endpoint: str) -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "agents-sdk-app"}))
    provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint), max_export_batch_size=4)
    )
    set_trace_processors([])  # nothing goes to the OpenAI platform
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    set_default_openai_client(AsyncOpenAI(base_url=chat_url, api_key="k", max_retries=0), False)
    set_default_openai_api("chat_completions")
    billing = Agent(name="billing", instructions="[billing]", tools=[get_order], model="m")
    triage = Agent(name="triage", instructions="[triage]", handoffs=[billing], model="m")
    tracer = provider.get_tracer("agents-sdk-app")
    with tracer.start_as_current_span("support workflow") as root:
        print(format(root.get_span_context().trace_id, "032x"), flush=True)
        result = Runner.run_sync(triage, "I was charged twice for order A1042")
        root.set_attribute("output.value", str(result.final_output))
    provider.shutdown()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
