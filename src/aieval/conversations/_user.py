"""The simulated user: a model on a provider the author configured, playing the scenario's persona.

No provider is chosen by default (never a hosted service): the author names one. The persona
prompt is built in and can be replaced; ``{goal}`` and ``{persona}`` in it are filled from the
scenario. The simulated user ends the conversation by writing :data:`DONE_MARKER`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aieval.conversations._scenario import Scenario
from aieval.core import Turn, Usage
from aieval.errors import ConfigError
from aieval.providers import ChatRequest, Provider

__all__ = ["DONE_MARKER", "PERSONA_PROMPT", "SimulatedUser", "UserReply"]

#: what the simulated user writes when its goal is reached or it gives up
DONE_MARKER = "[DONE]"

PERSONA_PROMPT = (
    "You are role-playing a user talking to an assistant. Stay in character for the whole "
    "conversation and never say you are an AI or a simulation.\n"
    "Who you are: {persona}\n"
    "What you want: {goal}\n"
    "Write only your next message to the assistant, short and natural. Do not reveal your goal "
    "word for word; say what a real user would say. When your goal is reached, or you see it "
    f"cannot be, end your message with {DONE_MARKER}."
)

#: sent when the simulated user speaks first (the model needs a user message to answer)
_OPENING = "(The conversation starts. Write your first message to the assistant.)"


@dataclass(frozen=True, slots=True)
class UserReply:
    """The simulated user's next message; ``done`` when it said it is done."""

    content: str
    done: bool
    usage: Usage | None = None
    latency_s: float | None = None


class SimulatedUser:
    """A simulated user on ``provider``.

    Args:
        provider: any configured :class:`~aieval.providers.Provider` (a local model works).
        model: the model name.
        temperature: sampling temperature (0 by default: the same conversation each time on a
            deterministic endpoint).
        seed: sent as the request's ``seed`` when given.
        prompt: the persona prompt; ``{goal}`` and ``{persona}`` are filled in.
        params: other request fields.
    """

    def __init__(
        self,
        provider: Provider,
        model: str,
        *,
        temperature: float = 0.0,
        seed: int | None = None,
        prompt: str = PERSONA_PROMPT,
        params: Mapping[str, Any] | None = None,
    ) -> None:
        if provider is None:
            raise ConfigError("SimulatedUser: give the provider the simulated user runs on")
        self.provider, self.model = provider, model
        self.temperature, self.seed, self.prompt = temperature, seed, prompt
        self.params = dict(params or {})

    def system_prompt(self, scenario: Scenario) -> str:
        # replace, not format: a goal or persona holding braces stays text
        return self.prompt.replace("{goal}", scenario.goal).replace(
            "{persona}", scenario.persona or "an ordinary user"
        )

    def messages(self, scenario: Scenario, turns: Sequence[Turn]) -> list[dict[str, Any]]:
        """The request's messages: the persona, then the conversation seen from the user's side
        (the assistant's messages as ``user``, the user's own as ``assistant``; tool turns and
        tool-call-only messages left out)."""
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": self.system_prompt(scenario)}
        ]
        for turn in turns:
            if turn.role == "tool" or not turn.content:
                continue
            role = "user" if turn.role == "assistant" else "assistant"
            messages.append({"role": role, "content": turn.content})
        if messages[-1]["role"] != "user":
            messages.append({"role": "user", "content": _OPENING})
        return messages

    async def reply(self, scenario: Scenario, turns: Sequence[Turn]) -> UserReply:
        """The user's next message (the marker taken out, ``done`` set when it was there)."""
        params = dict(self.params)
        if self.seed is not None:
            params["seed"] = self.seed
        response = await self.provider.generate(
            ChatRequest(
                self.model,
                self.messages(scenario, turns),
                temperature=self.temperature,
                params=params,
            )
        )
        done = DONE_MARKER in response.text
        content = response.text.replace(DONE_MARKER, "").strip() if done else response.text
        usage = Usage(
            response.input_tokens, response.output_tokens, response.cost, response.retries
        )
        return UserReply(content, done, usage, response.latency_s)
