"""A sample's tool trajectory: the calls made, the calls expected, and how they were paired.

The trajectory scorer (:mod:`aieval.scorers`) writes one :class:`Trajectory` per sample into
its score's metadata under :data:`TRAJECTORY_KEY`; per-tool figures in reports and
comparisons read it back with :meth:`Trajectory.from_dict`. Recorded runs, traces and
conversations all give the same shape.

A scorer that stores trajectories stores one with every score it gives a value (a report
looks at a run's first samples to learn whether any scorer stores them, and reads no
metadata when none does).

Pairing: every index of ``called`` and of ``expected`` appears in exactly one
:class:`ToolMatch`. A pair with both indices set and the same tool name is a match (its
arguments compared, or not when the argument mode ignores them); a pair whose names differ is
a substitution (the confusion matrix's off-diagonal cell); ``expected=None`` is an extra
call, ``called=None`` an expected call never made.

Parallel calls: calls with the same :attr:`ToolUse.batch` were issued together (one assistant
message, turn or step) and have no order among them; the ordered modes do not hold their
order against them.

Tool-error recovery: a call whose ``error`` is set ran and failed (the tool's own error or an
injected one). A sample recovered from its tool errors when it still passed; reports count
recovery per sample and per tool over samples with at least one such error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aieval.errors import ConfigError

__all__ = ["TRAJECTORY_KEY", "ToolMatch", "ToolUse", "Trajectory"]

#: the key of :attr:`aieval.core.Score.metadata` that holds a sample's trajectory
TRAJECTORY_KEY = "trajectory"


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One tool call as a trajectory sees it.

    Attributes:
        name: the tool's name.
        arguments: the arguments as parsed JSON (usually an object), ``None`` when they could
            not be read (see ``argument_error``).
        error: the tool ran and failed: its error message (``None``: it succeeded or the
            record does not say).
        argument_error: why the arguments are unusable (not JSON, not valid for the tool's
            schema), ``None`` when they are fine.
        batch: the index of the assistant message, turn or step that made the call: calls
            with the same batch were issued together (parallel calls, no order among them);
            ``None`` when the record does not say.
    """

    name: str
    arguments: Any = None
    error: str | None = None
    argument_error: str | None = None
    batch: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "arguments": self.arguments,
            "error": self.error,
            "argument_error": self.argument_error,
        }
        if self.batch is not None:  # written only when known: older records read the same
            out["batch"] = self.batch
        return out

    @classmethod
    def from_dict(cls, data: Any, where: str) -> ToolUse:
        fields = _fields(data, where, ("name", "arguments", "error", "argument_error", "batch"))
        name = fields.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{where}.name: expected a tool name, got {name!r}")
        batch = fields.get("batch")
        if batch is not None and (type(batch) is not int or batch < 0):
            raise ConfigError(f"{where}.batch: expected a message index or null, got {batch!r}")
        return cls(
            name=name,
            arguments=fields.get("arguments"),
            error=_text(fields.get("error"), f"{where}.error"),
            argument_error=_text(fields.get("argument_error"), f"{where}.argument_error"),
            batch=batch,
        )


@dataclass(frozen=True, slots=True)
class ToolMatch:
    """One pairing of an expected call with a made call (either side may be missing).

    Attributes:
        expected: index into :attr:`Trajectory.expected`, ``None`` for an extra call.
        called: index into :attr:`Trajectory.called`, ``None`` for a call never made.
        arguments_match: whether the arguments agree under the argument mode; ``None`` when
            not compared (a side is missing, the names differ, or arguments are ignored).
    """

    expected: int | None
    called: int | None
    arguments_match: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "expected": self.expected,
            "called": self.called,
            "arguments_match": self.arguments_match,
        }

    @classmethod
    def from_dict(cls, data: Any, where: str) -> ToolMatch:
        fields = _fields(data, where, ("expected", "called", "arguments_match"))
        expected, called = fields.get("expected"), fields.get("called")
        for key, value in (("expected", expected), ("called", called)):
            if value is not None and (type(value) is not int or value < 0):
                raise ConfigError(f"{where}.{key}: expected an index or null, got {value!r}")
        if expected is None and called is None:
            raise ConfigError(f"{where}: a match needs an expected or a called index")
        same = fields.get("arguments_match")
        if same is not None and not isinstance(same, bool):
            raise ConfigError(f"{where}.arguments_match: expected true, false or null")
        return cls(expected=expected, called=called, arguments_match=same)


@dataclass(frozen=True, slots=True)
class Trajectory:
    """A sample's tool calls against the expected ones, paired.

    Attributes:
        called: the calls the agent made, in order.
        expected: the calls the row or scenario expected, in order (empty: none given).
        matches: the pairing (see the module docstring).
        forbidden: tool names that must not be called.
        mode: how calls were matched (``strict``, ``in_order``, ``unordered``, ``subset``,
            ``superset``).
        arguments_mode: how arguments were compared (``exact``, ``ignore``, ``subset``,
            ``superset``).
    """

    called: tuple[ToolUse, ...]
    expected: tuple[ToolUse, ...] = ()
    matches: tuple[ToolMatch, ...] = ()
    forbidden: tuple[str, ...] = ()
    mode: str = "strict"
    arguments_mode: str = "exact"

    def __post_init__(self) -> None:
        seen_called = [m.called for m in self.matches if m.called is not None]
        seen_expected = [m.expected for m in self.matches if m.expected is not None]
        if self.matches and (
            sorted(seen_called) != list(range(len(self.called)))
            or sorted(seen_expected) != list(range(len(self.expected)))
        ):
            raise ConfigError(
                "trajectory: the matches must pair every called and every expected call once"
            )

    def is_match(self, match: ToolMatch) -> bool:
        """Whether ``match`` pairs two calls of the same tool whose arguments did not differ."""
        if match.expected is None or match.called is None:
            return False
        same_name = self.expected[match.expected].name == self.called[match.called].name
        return same_name and match.arguments_match is not False

    @property
    def matched(self) -> int:
        """How many pairs are matches (same tool, arguments not different)."""
        return sum(self.is_match(m) for m in self.matches)

    @property
    def precision(self) -> float | None:
        """Matches over calls made (``None`` with no call)."""
        return self.matched / len(self.called) if self.called else None

    @property
    def recall(self) -> float | None:
        """Matches over calls expected (``None`` with none expected)."""
        return self.matched / len(self.expected) if self.expected else None

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall; 1.0 when nothing was expected or made."""
        if not self.called and not self.expected:
            return 1.0
        total = len(self.called) + len(self.expected)
        return 2 * self.matched / total

    @property
    def forbidden_hits(self) -> tuple[str, ...]:
        """The forbidden tools that were called, once per call, in call order."""
        banned = set(self.forbidden)
        return tuple(c.name for c in self.called if c.name in banned)

    def to_dict(self) -> dict[str, Any]:
        return {
            "called": [c.to_dict() for c in self.called],
            "expected": [c.to_dict() for c in self.expected],
            "matches": [m.to_dict() for m in self.matches],
            "forbidden": list(self.forbidden),
            "mode": self.mode,
            "arguments_mode": self.arguments_mode,
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = TRAJECTORY_KEY) -> Trajectory:
        """Read a stored trajectory; a malformed one raises ``ConfigError`` naming the field."""
        fields = _fields(
            data, where, ("called", "expected", "matches", "forbidden", "mode", "arguments_mode")
        )
        forbidden = fields.get("forbidden") or []
        if not isinstance(forbidden, list) or not all(isinstance(n, str) for n in forbidden):
            raise ConfigError(f"{where}.forbidden: expected a list of tool names")
        return cls(
            called=tuple(
                ToolUse.from_dict(c, f"{where}.called[{i}]")
                for i, c in enumerate(_list(fields, "called", where))
            ),
            expected=tuple(
                ToolUse.from_dict(c, f"{where}.expected[{i}]")
                for i, c in enumerate(_list(fields, "expected", where))
            ),
            matches=tuple(
                ToolMatch.from_dict(m, f"{where}.matches[{i}]")
                for i, m in enumerate(_list(fields, "matches", where))
            ),
            forbidden=tuple(forbidden),
            mode=str(fields.get("mode") or "strict"),
            arguments_mode=str(fields.get("arguments_mode") or "exact"),
        )


def _fields(data: Any, where: str, allowed: tuple[str, ...]) -> Mapping[str, Any]:
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError as exc:
            raise ConfigError(f"{where}: not JSON ({exc})") from None
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: expected an object, got {type(data).__name__}")
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise ConfigError(f"{where}: unknown field {unknown[0]!r}; the fields are {allowed}")
    return data


def _list(fields: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = fields.get(key) or []
    if not isinstance(value, list):
        raise ConfigError(f"{where}.{key}: expected a list")
    return value


def _text(value: Any, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ConfigError(f"{where}: expected text or null, got {type(value).__name__}")
