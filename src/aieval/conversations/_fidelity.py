"""Simulator fidelity: did the simulated user play its part?

A conversation whose simulated user broke persona, revealed its goal word for word, or said it
was done before the task was done measures the simulator, not the target. These checks flag
such a conversation; a flagged conversation is *invalid*: reports count it apart from failures
and it is never scored as the target's fault. The checks are heuristics over the finished
record and need no model, so they run offline (measured in ``bench/conversation_fidelity.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from aieval.conversations._scenario import Scenario
from aieval.core import Conversation, Turn
from aieval.errors import ConversationError

__all__ = [
    "CONVERSATION_KEY",
    "FIDELITY_KEY",
    "GOAL_LEAK_NGRAM",
    "FidelityFlag",
    "FidelityKind",
    "SimulatorFidelity",
    "check_fidelity",
]

#: the key of a sample's ``extra`` that holds its ``Conversation.to_dict()``
CONVERSATION_KEY = "conversation"
#: the key of a sample's ``extra`` that holds its ``SimulatorFidelity.to_dict()``
FIDELITY_KEY = "fidelity"
#: a simulated user turn holding this many consecutive words of the goal revealed it
GOAL_LEAK_NGRAM = 8

#: what the simulated user did wrong: said it is an AI or spoke as the assistant, revealed its
#: goal word for word, or said it was done while the task was not
FidelityKind = Literal["persona_break", "goal_leak", "early_stop"]
_KINDS = frozenset(get_args(FidelityKind))

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")

# The simulated user says what it is (an AI, a model, a bot, a simulation) or names its
# instructions: a real user does neither.
_SELF_AI = re.compile(
    r"\b(?:as an? (?:ai|a\.i\.|language model|llm|assistant|chatbot|bot|virtual assistant)"
    r"|i(?:'m| am) (?:just |only |actually |really )?(?:an? )?(?:ai|a\.i\.|artificial"
    r"|(?:large )?language model|llm|chatbot|bot|(?:virtual |digital |ai )?assistant"
    r"|simulat\w*|role-?play\w*|program(?:med)?|machine)"
    r"|(?:my|the) (?:system prompt|instructions|persona|assigned goal|role-?play)"
    r"|(?:this|a) (?:simulation|role-?play)\b|simulated user"
    r"|i (?:was|have been) (?:told|instructed|asked|programmed) to (?:play|act|pretend)"
    r"|(?:break|breaking|out of) character)",
)
# The simulated user answers as the assistant would: offers help, or serves the user.
_ASSISTANT_VOICE = re.compile(
    r"\b(?:how (?:can|may|could) i (?:help|assist)"
    r"|(?:is there )?anything else i can (?:help|do|assist)"
    r"|i(?:'d| would) be (?:happy|glad|delighted) to (?:help|assist)"
    r"|i can (?:help|assist) you(?: with)?"
    r"|let me (?:help|assist) you"
    r"|happy to (?:help|assist)(?! me)"
    r"|what can i (?:help|do for) you"
    r"|(?:thank you|thanks) for (?:contacting|reaching out to|choosing) (?:us|our)"
    r"|here(?:'s| is) (?:how|what) you (?:can|should|need)"
    r"|feel free to (?:ask|reach out|contact)"
    r"|(?:dear|valued) customer)",
)
# An assistant turn that leaves the task open: it asks the user something, or says it is
# about to act. A user who says it is done right after such a turn stopped early.
_PENDING = re.compile(
    r"(?:\?\s*$"
    r"|\b(?:could|can|would|will) you (?:please )?(?:give|provide|send|share|confirm|tell|"
    r"check|let me know)"
    r"|\bplease (?:provide|send|share|confirm|give|tell|let me know)"
    r"|\b(?:let me|i(?:'ll| will)) (?:check|look|see|find|process|start|get|pull|verify|"
    r"look into|go ahead)"
    r"|\bone moment\b|\bjust a (?:moment|second|minute)\b|\bplease (?:wait|hold)\b"
    r"|\bi need (?:your|the|a|some)\b|\bbefore i can\b)",
)
# An assistant's closing offer: a question that does not leave the task open.
_CLOSING = re.compile(
    r"\b(?:anything else|is there (?:something|anything)|does (?:that|this) help"
    r"|(?:did|does) (?:that|this) (?:answer|solve|help)|other questions?|more questions?)\b"
)
_PERSON: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("i", "you", "we", "me", "us"), ("~p",)),
    **dict.fromkeys(("my", "your", "our"), ("~pp",)),
    **dict.fromkeys(("mine", "yours", "ours"), ("~ppp",)),
    **dict.fromkeys(("am", "are"), ("~be",)),
    **{
        f"{p}{s}": ("~p", w)
        for p in ("i", "you", "we")
        for s, w in (
            ("'m", "~be"),
            ("'re", "~be"),
            ("'ve", "have"),
            ("'ll", "will"),
            ("'d", "would"),
        )
    },
}
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
# A user's last words that say the task is done (when the goal is known not to be met).
_CLAIMS_DONE = re.compile(
    r"\b(?:that(?:'s| is| was) (?:all|everything|perfect|great|it)|all (?:set|sorted|good|done)"
    r"|(?:problem|issue|that) (?:is )?(?:solved|sorted|fixed|resolved)|perfect|great,? thanks"
    r"|thanks?,? (?:that|this) (?:helps|worked|works|did it)|got (?:it|what i needed))\b",
)


@dataclass(frozen=True, slots=True)
class FidelityFlag:
    """One simulator error in a conversation.

    Attributes:
        kind: ``persona_break``, ``goal_leak`` or ``early_stop``.
        turn: the 1-based number of the user turn that shows it.
        evidence: what the check saw (the words matched, the goal's words revealed, why the
            task was not done).
    """

    kind: FidelityKind
    turn: int
    evidence: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "turn": self.turn, "evidence": self.evidence}

    @classmethod
    def from_dict(cls, data: Any, where: str) -> FidelityFlag:
        if not isinstance(data, Mapping):
            raise ConversationError(f"{where}: expected an object")
        kind, turn, evidence = data.get("kind"), data.get("turn"), data.get("evidence")
        if kind not in _KINDS:
            raise ConversationError(f"{where}.kind: {kind!r} is not one of {sorted(_KINDS)}")
        if not isinstance(turn, int) or isinstance(turn, bool) or turn < 1:
            raise ConversationError(f"{where}.turn: expected a turn number >= 1")
        if not isinstance(evidence, str):
            raise ConversationError(f"{where}.evidence: expected a string")
        return cls(kind, turn, evidence)  # type: ignore[arg-type]  # checked against _KINDS


@dataclass(frozen=True, slots=True)
class SimulatorFidelity:
    """The simulator fidelity of one conversation: its flags, none when the simulated user
    played its part.

    A sample keeps it in ``extra["fidelity"]`` (:data:`FIDELITY_KEY`) beside its
    conversation; :attr:`valid` is false when any check flagged it.
    """

    flags: tuple[FidelityFlag, ...] = ()

    @property
    def valid(self) -> bool:
        """Whether no check flagged the simulated user (the conversation measures the
        target)."""
        return not self.flags

    def reason(self) -> str:
        """One line naming each flag and its turn (empty when valid)."""
        return "; ".join(f"{f.kind} at turn {f.turn}: {f.evidence}" for f in self.flags)

    def merged(self, other: SimulatorFidelity) -> SimulatorFidelity:
        """The flags of both (the offline checks' and a judge's), the earliest of each kind."""
        first: dict[str, FidelityFlag] = {}
        for flag in sorted((*self.flags, *other.flags), key=lambda f: f.turn):
            first.setdefault(flag.kind, flag)
        return SimulatorFidelity(tuple(first.values()))

    def to_dict(self) -> dict[str, Any]:
        return {"valid": self.valid, "flags": [flag.to_dict() for flag in self.flags]}

    @classmethod
    def from_dict(cls, data: Any) -> SimulatorFidelity:
        """What :meth:`to_dict` wrote; a :class:`ConversationError` names a bad field."""
        if not isinstance(data, Mapping) or not isinstance(data.get("flags"), list):
            raise ConversationError("fidelity: expected an object with a list of flags")
        return cls(
            tuple(
                FidelityFlag.from_dict(f, f"fidelity.flags[{i}]")
                for i, f in enumerate(data["flags"])
            )
        )


def check_fidelity(
    conversation: Conversation, scenario: Scenario, *, goal_met: bool | None = None
) -> SimulatorFidelity:
    """Flag the simulated user of a finished conversation when it broke persona, revealed its
    goal word for word, or stopped before the task was done.

    Only the simulated user's turns are judged: scripted turns are the author's, and a
    replayed user turn counts as simulated when it comes after the scenario's scripted turns.

    Args:
        conversation: the finished record.
        scenario: its scenario (the goal, the scripted turns).
        goal_met: whether the task was done (the goal check or the expected final state), when
            the caller knows; ``None``: judged from the transcript alone.

    Returns:
        The flags, at most one of each kind (the first turn that shows it).
    """
    simulated = list(_simulated_turns(conversation, scenario))
    flags = [
        flag
        for flag in (
            _persona_break(conversation, simulated),
            _goal_leak(simulated, scenario.goal),
            _early_stop(conversation, simulated, goal_met),
        )
        if flag is not None
    ]
    return SimulatorFidelity(tuple(flags))


def simulated_turn_numbers(conversation: Conversation, scenario: Scenario) -> list[int]:
    """The numbers of the user turns the simulated user said (not the scripted ones)."""
    return [number for number, _ in _simulated_turns(conversation, scenario)]


def _simulated_turns(conversation: Conversation, scenario: Scenario) -> Iterator[tuple[int, Turn]]:
    """``(turn number, turn)`` of each user turn the simulated user said."""
    start = len(scenario.initial_messages)
    said = 0
    for number, turn in enumerate(conversation.turns, 1):
        if number <= start or turn.role != "user":
            continue
        said += 1
        if turn.source == "simulated" or (
            turn.source == "replayed" and said > len(scenario.user_turns)
        ):
            yield number, turn


def _persona_break(
    conversation: Conversation, turns: list[tuple[int, Turn]]
) -> FidelityFlag | None:
    for number, turn in turns:
        text = _plain(turn.content)
        match = _SELF_AI.search(text) or _ASSISTANT_VOICE.search(text)
        if match is not None:
            return FidelityFlag("persona_break", number, f"said {match.group(0)!r}")
        # a user that goes on as the assistant repeats the assistant's own words
        said = {
            gram
            for earlier in conversation.turns[: number - 1]
            if earlier.role == "assistant"
            for gram in _grams(_WORD.findall(_plain(earlier.content)), GOAL_LEAK_NGRAM)
        }
        echo = _first_shared(_WORD.findall(text), said, GOAL_LEAK_NGRAM)
        if echo is not None:
            return FidelityFlag("persona_break", number, f"repeated the assistant's {echo!r}")
    return None


def _grams(words: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def _first_shared(words: list[str], grams: set[tuple[str, ...]], n: int) -> str | None:
    for i in range(len(words) - n + 1):
        if tuple(words[i : i + n]) in grams:
            return " ".join(words[i : i + n])
    return None


def _goal_leak(turns: list[tuple[int, Turn]], goal: str) -> FidelityFlag | None:
    goal_words = _words(goal)
    n = min(GOAL_LEAK_NGRAM, len(goal_words))
    if n < GOAL_LEAK_NGRAM // 2 + 2:  # a goal this short is said by any user who asks for it
        return None
    grams = _grams(goal_words, n)
    for number, turn in turns:
        leaked = _first_shared(_words(turn.content), grams, n)
        if leaked is not None:
            return FidelityFlag("goal_leak", number, f"repeated the goal's words {leaked!r}")
    return None


def _early_stop(
    conversation: Conversation, turns: list[tuple[int, Turn]], goal_met: bool | None
) -> FidelityFlag | None:
    # only the simulated user says it is done (``user_done``)
    if conversation.outcome.stop_reason != "user_done" or goal_met is True:
        return None
    number = len(conversation.turns)
    said_last = bool(turns) and turns[-1][0] == number
    # else its last message was only the done marker: it stopped after the last turn
    words = turns[-1][1].content if said_last else ""
    before = _assistant_before(conversation, number if said_last else number + 1)
    if before is not None and _pending(before.content):
        return FidelityFlag(
            "early_stop", number, "said it was done while the assistant was still asking or acting"
        )
    claim = _CLAIMS_DONE.search(_plain(words)) if goal_met is False else None
    if claim is not None:
        return FidelityFlag(
            "early_stop", number, f"said {claim.group(0)!r} while the goal was not met"
        )
    return None


def _pending(text: str) -> bool:
    """Whether an assistant's answer leaves the task open (a closing offer of more help does
    not)."""
    sentences = [s for s in _SENTENCE.split(_plain(text).strip()) if s.strip()]
    if not sentences:
        return False
    if _CLOSING.search(sentences[-1]):
        sentences = sentences[:-1]
    return any(_PENDING.search(s.strip()) for s in sentences[-2:])


def _assistant_before(conversation: Conversation, number: int) -> Turn | None:
    """The last assistant turn with text before turn ``number``."""
    for turn in reversed(conversation.turns[: number - 1]):
        if turn.role == "user":
            return None
        if turn.role == "assistant" and turn.content.strip():
            return turn
    return None


def _words(text: str) -> list[str]:
    """The text's words, with the speaker's and the listener's pronouns made one (a brief
    written to "you" leaks as "I")."""
    words: list[str] = []
    for word in _WORD.findall(_plain(text)):
        words.extend(_PERSON.get(word, (word,)))
    return words


def _plain(text: str) -> str:
    """Lower case, with typographic apostrophes made plain (``I’m`` matches ``i'm``)."""
    return text.lower().replace("\u2019", "'")
