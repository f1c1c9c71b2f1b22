"""The ``conversations`` section of a run report: how its conversations ended.

A sample of a conversation run keeps its record in ``extra["conversation"]`` and its
simulator fidelity in ``extra["fidelity"]`` (``aieval.conversations``). The section counts the
conversations that completed, hit the turn limit, failed (the target, the simulated user or a
replay) and were *invalid* (the simulated user failed fidelity: counted apart, never the
target's fault), with the stop reasons, the turns per conversation, and each failure and
invalid conversation by scenario and turn. Cells are plain text; each renderer escapes them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aieval._records import SampleRecord
from aieval.conversations import CONVERSATION_KEY, FIDELITY_KEY, SimulatorFidelity
from aieval.core import Conversation
from aieval.errors import ConversationError
from aieval.store import RunRow, Store

__all__ = [
    "ISSUE_HEAD",
    "STOP_HEAD",
    "ConversationIssue",
    "ConversationSummary",
    "conversation_summary",
    "conversations_section",
    "conversations_totals",
    "is_conversation_run",
    "issue_rows",
    "issues_title",
    "stop_rows",
    "turns_line",
]

#: failures and invalid conversations listed one by one (the counts hold them all)
MAX_LISTED = 50

STOP_HEAD = ["stop reason", "conversations"]
ISSUE_HEAD = ["scenario", "epoch", "turn", "outcome", "what"]


@dataclass(frozen=True, slots=True)
class ConversationIssue:
    """A failed or invalid conversation: where it went wrong and how."""

    sample_id: str
    scenario_id: str
    epoch: int
    turn: int
    outcome: str  # "failed" or "invalid"
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "sample_id": self.sample_id,
            "scenario_id": self.scenario_id,
            "epoch": self.epoch,
            "turn": self.turn,
            "outcome": self.outcome,
            "detail": self.detail,
        }


@dataclass(slots=True)
class ConversationSummary:
    """The counts of a run's conversations (built sample by sample with :meth:`add`)."""

    conversations: int = 0
    completed: int = 0
    turn_limit: int = 0
    failed: int = 0
    invalid: int = 0
    unreadable: int = 0
    stop_reasons: Counter[str] = field(default_factory=Counter)
    turns: list[int] = field(default_factory=list)
    issues: list[ConversationIssue] = field(default_factory=list)

    def add(self, sample: SampleRecord) -> None:
        """Count one sample (one without a conversation is not counted)."""
        data = sample.extra.get(CONVERSATION_KEY)
        if data is None:
            return
        self.conversations += 1
        try:
            record = Conversation.from_dict(data)
            fidelity = _fidelity(sample.extra.get(FIDELITY_KEY))
        except ConversationError as exc:  # one bad record never hides the others
            self.unreadable += 1
            scenario = data.get("scenario_id") if isinstance(data, Mapping) else None
            self.issues.append(
                ConversationIssue(sample.id, str(scenario or "?"), 0, 0, "unreadable", str(exc))
            )
            return
        self.stop_reasons[record.outcome.stop_reason] += 1
        self.turns.append(len(record.turns))
        self._outcome(sample.id, record, fidelity)

    def _outcome(self, sample_id: str, record: Conversation, fidelity: SimulatorFidelity) -> None:
        # a failure is the target's (or the replay's) whatever the simulated user did before
        if record.outcome.stop_reason == "failed":
            self.failed += 1
            detail = f"{record.outcome.failure_type or 'failure'}: {record.outcome.failure or ''}"
            self._issue(sample_id, record, len(record.turns) + 1, "failed", detail)
        elif not fidelity.valid:
            self.invalid += 1
            self._issue(sample_id, record, fidelity.flags[0].turn, "invalid", fidelity.reason())
        elif record.outcome.completed:
            self.completed += 1
        else:
            self.turn_limit += 1

    def _issue(
        self, sample_id: str, record: Conversation, turn: int, outcome: str, detail: str
    ) -> None:
        self.issues.append(
            ConversationIssue(sample_id, record.scenario_id, record.epoch, turn, outcome, detail)
        )

    def to_dict(self) -> dict[str, Any]:
        """The report's ``conversations`` section."""
        return {
            "conversations": self.conversations,
            "completed": self.completed,
            "turn_limit": self.turn_limit,
            "failed": self.failed,
            "invalid": self.invalid,
            "unreadable": self.unreadable,
            "stop_reasons": dict(sorted(self.stop_reasons.items())),
            "turns": {
                "mean": sum(self.turns) / len(self.turns) if self.turns else None,
                "max": max(self.turns, default=None),
            },
            "issues": [issue.to_dict() for issue in self.issues[:MAX_LISTED]],
            "issues_total": len(self.issues),
        }


def _fidelity(data: Any) -> SimulatorFidelity:
    # no verdict stored: the run did not check fidelity, nothing is flagged
    return SimulatorFidelity() if data is None else SimulatorFidelity.from_dict(data)


def conversation_summary(samples: Iterable[SampleRecord]) -> ConversationSummary | None:
    """The summary of the samples' conversations; ``None`` when none has one."""
    summary = ConversationSummary()
    for sample in samples:
        summary.add(sample)
    return summary if summary.conversations else None


def conversations_section(store: Store, row: RunRow) -> dict[str, Any] | None:
    """The section of a stored run of conversations, else ``None``.

    A run of conversations has a ``conversation`` key in its config, or a first stored sample
    holding one: a run without conversations reads one sample more, not all of them.
    """
    if not is_conversation_run(store, row):
        return None
    summary = conversation_summary(store.iter_samples(row.id, texts=False))
    return None if summary is None else summary.to_dict()


def is_conversation_run(store: Store, row: RunRow) -> bool:
    """Whether ``row``'s samples hold conversations: its config has a ``conversation`` key, or
    its first stored sample holds one (one sample read, not all)."""
    if CONVERSATION_KEY in row.config:
        return True
    first = store.samples_since(row.id, 0, limit=1)
    return bool(first) and CONVERSATION_KEY in first[0].extra


def conversations_totals(section: Mapping[str, Any]) -> str:
    """``N conversations: completed a, turn limit b, failed c, invalid d``."""
    counts = [
        f"{label} {section.get(key, 0)}"
        for key, label in (
            ("completed", "completed"),
            ("turn_limit", "turn limit"),
            ("failed", "failed"),
            ("invalid", "invalid (simulated user)"),
        )
    ]
    if section.get("unreadable"):
        counts.append(f"unreadable {section['unreadable']}")
    return f"{section.get('conversations', 0)} conversations: {', '.join(counts)}"


def turns_line(section: Mapping[str, Any]) -> str:
    """``turns per conversation: mean 6.2, max 14``."""
    turns = section.get("turns") or {}
    mean = turns.get("mean")
    shown = "n/a" if mean is None else f"{mean:.1f}"
    return f"turns per conversation: mean {shown}, max {turns.get('max') or 'n/a'}"


def stop_rows(section: Mapping[str, Any]) -> list[list[str]]:
    """One row per stop reason: the reason, its count."""
    return [[reason, str(n)] for reason, n in (section.get("stop_reasons") or {}).items()]


def issue_rows(section: Mapping[str, Any]) -> list[list[str]]:
    """One row per failed or invalid conversation: scenario, epoch, turn, outcome, what."""
    return [
        [
            str(issue.get("scenario_id")),
            str(issue.get("epoch")),
            str(issue.get("turn")),
            str(issue.get("outcome")),
            str(issue.get("detail") or "")[:200],
        ]
        for issue in section.get("issues") or []
    ]


def issues_title(section: Mapping[str, Any]) -> str:
    """``Failed and invalid conversations`` with ``(50 of 73)`` when some are not listed."""
    shown, total = len(section.get("issues") or []), section.get("issues_total", 0)
    more = f" ({shown} of {total})" if shown < total else ""
    return "Failed and invalid conversations" + more
