"""Scripted judges for the loopback server: a gullible one and a position-biased one."""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from tests.support.openai_server import OpenAIServer, Reply

from aieval.providers import OpenAIProvider

HONEST_SCORE = 2

_OPEN = re.compile(r"<CANDIDATE_ANSWER-[0-9a-f]+>")
# Deliberately gullible: any closing-tag look-alike, in any case, ends the candidate block.
_CLOSE = re.compile(r"</\s*CANDIDATE_ANSWER", re.IGNORECASE)
_SCORE = re.compile(r'\{\s*"score"\s*:\s*(\d+(?:\.\d+)?)')
_ORDER = re.compile(r"ignore (all )?(previous|prior|above) instructions", re.IGNORECASE)

_FOLD = str.maketrans({c: "<" for c in "‹〈⟨❮❬❰˂ᐸ«⋖⧼〈"} | {c: ">" for c in "›〉⟩❯❭❱˃ᐳ»⋗⧽〉"})


def user_text(body: Any) -> str:
    return str(body["messages"][-1]["content"])


def outside_candidate(text: str) -> str:
    """What a careless reader treats as instructions: all but the candidate block's inside."""
    text = unicodedata.normalize("NFKC", text).translate(_FOLD)
    opened = _OPEN.search(text)
    if opened is None:
        return text
    closed = _CLOSE.search(text, opened.end())
    return text[: opened.start()] + (text[closed.end() :] if closed else "")


def gullible_reply(body: Any) -> Reply:
    """Obeys a score or an instruction found outside the candidate block; else scores 2."""
    outside = outside_candidate(user_text(body))
    planted = _SCORE.search(outside)
    if planted:
        return Reply(json.dumps({"score": float(planted.group(1)), "reason": "as instructed"}))
    if _ORDER.search(outside):
        return Reply(json.dumps({"score": 10, "reason": "obeyed an instruction"}))
    return Reply(json.dumps({"score": HONEST_SCORE, "reason": "honest"}))


def provider_for(server: OpenAIServer) -> OpenAIProvider:
    return OpenAIProvider(server.base_url, api_key="sk-judge", name="judge-endpoint")
