"""Final state: the state an episode left (a database, a ticket queue) against the expected one.

As in tau-bench: after the episode, the environment's state is compared with the state the
gold actions produce. The expected state is a JSON document a row gives (``expected_state``,
with matching options in ``state_match``), or a Python check over the state that only the eval
author gives (``check=``); a row can never name code. The comparison is a structured diff
(added / removed / changed, JSON-pointer paths, capped) in the score's metadata, and its lines
in the reason, so ``aieval show`` and the reports' sample detail show it where reasons appear.

Where the state comes from (first found): an output that carries it (a played conversation's
environment snapshot, a workflow run's ``final_state`` output), else, for a recorded row, the
row's ``final_state`` field or a prediction that is a JSON object with a ``final_state`` member.
"""

from __future__ import annotations

import inspect
import json
import math
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from aieval._types import Score
from aieval.errors import ConfigError, DatasetError, ScorerError
from aieval.grading import GateResult, register_gate
from aieval.scorers._scorer import scorer

__all__ = [
    "FINAL_STATE_KEY",
    "MAX_DIFF_ENTRIES",
    "MAX_PAIRINGS",
    "MAX_STATE_BYTES",
    "CarriesFinalState",
    "StateChange",
    "StateDiff",
    "StateMatch",
    "compare_state",
    "diff_state",
    "final_state",
    "final_state_matches",
    "state_snapshot",
]

#: the field (a recorded row's, a sample's ``extra``, a workflow run's output) holding the state
FINAL_STATE_KEY = "final_state"
#: the most bytes a state snapshot may take as JSON; a bigger one is refused, never cut
MAX_STATE_BYTES = 1_000_000
#: the most differences kept in a diff (its metadata and reason); the total is always counted
MAX_DIFF_ENTRIES = 50
#: the most item comparisons pairing one unordered list may take when the options loosen its
#: items (tolerance, ignore or unordered inside them; its unequal items, expected x actual): a
#: bigger one is refused, never cut short. Exact matching pairs equal items and compares none
MAX_PAIRINGS = 100_000
#: the longest value text a reason line shows
_SHOWN_CHARS = 200
_MATCH_FIELDS = frozenset({"ignore", "tolerance", "unordered"})

ChangeKind = Literal["added", "removed", "changed"]


@runtime_checkable
class CarriesFinalState(Protocol):
    """An output that recorded the state its episode left (``None``: it recorded none)."""

    @property
    def final_state(self) -> Any: ...

    @property
    def final_state_error(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class StateMatch:
    """How loosely a state must match.

    Attributes:
        ignore: JSON pointers left out of the comparison (``*`` matches any one segment:
            ``/orders/*/updated_at``).
        tolerance: numbers match when they differ by at most this much (absolute).
        unordered: JSON pointers of lists compared as multisets (``*`` as in ``ignore``).
    """

    ignore: tuple[str, ...] = ()
    tolerance: float = 0.0
    unordered: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("ignore", "unordered"):
            for pointer in getattr(self, name):
                if not isinstance(pointer, str) or (pointer and not pointer.startswith("/")):
                    raise ValueError(
                        f"{name}: {pointer!r} is not a JSON pointer ('' or starting with '/')"
                    )
        if (
            isinstance(self.tolerance, bool)
            or not isinstance(self.tolerance, int | float)
            or not math.isfinite(self.tolerance)
            or self.tolerance < 0
        ):
            raise ValueError(f"tolerance: must be a finite number >= 0, got {self.tolerance!r}")

    @classmethod
    def parse(cls, data: Any, where: str) -> StateMatch:
        """Options from a mapping (``ignore``, ``tolerance``, ``unordered``).

        Raises:
            ValueError: an unknown key or a bad value, named with ``where``.
        """
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            raise ValueError(f"{where}: expected a mapping of ignore, tolerance, unordered")
        unknown = sorted(str(k) for k in data if k not in _MATCH_FIELDS)
        if unknown:
            raise ValueError(
                f"{where}.{unknown[0]}: not a matching option (allowed: ignore, tolerance, "
                "unordered)"
            )
        try:
            return cls(
                _pointers(data.get("ignore", ()), f"{where}.ignore"),
                data.get("tolerance", 0.0),
                _pointers(data.get("unordered", ()), f"{where}.unordered"),
            )
        except ValueError as exc:
            raise ValueError(f"{where}.{exc}") from None

    def merged(self, other: StateMatch) -> StateMatch:
        """Both sets of paths, and the larger tolerance."""
        return StateMatch(
            tuple(dict.fromkeys((*self.ignore, *other.ignore))),
            max(self.tolerance, other.tolerance),
            tuple(dict.fromkeys((*self.unordered, *other.unordered))),
        )


def _pointers(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Sequence) or not all(isinstance(p, str) for p in value):
        raise ValueError(f"{where.rpartition('.')[2]}: expected a list of JSON pointers")
    return tuple(value)


@dataclass(frozen=True, slots=True)
class StateChange:
    """One difference: a path the actual state has and the expected lacks (``added``), the
    reverse (``removed``), or a value that differs (``changed``)."""

    kind: ChangeKind
    path: str
    expected: Any = None
    actual: Any = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path}
        if self.kind != "added":
            out["expected"] = self.expected
        if self.kind != "removed":
            out["actual"] = self.actual
        return out

    def line(self) -> str:
        """The change as a reason shows it."""
        if self.kind == "added":
            return f"+ {self.path or '(whole state)'}: {_shown(self.actual)} (not expected)"
        if self.kind == "removed":
            return f"- {self.path or '(whole state)'}: {_shown(self.expected)} (missing)"
        where = self.path or "(whole state)"
        return f"~ {where}:\n    -{_shown(self.expected)}\n    +{_shown(self.actual)}"


@dataclass(frozen=True, slots=True)
class StateDiff:
    """The differences between an expected and an actual state, at most
    :data:`MAX_DIFF_ENTRIES` of them kept (``total`` counts them all)."""

    changes: tuple[StateChange, ...] = ()
    total: int = 0
    #: how many of each kind (``changed``, ``added``, ``removed``), the ones not kept included
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def matches(self) -> bool:
        return self.total == 0

    def to_dict(self) -> dict[str, Any]:
        """``added`` / ``removed`` / ``changed`` lists, the ``total`` and whether the lists
        were ``truncated``."""
        out: dict[str, Any] = {"added": [], "removed": [], "changed": []}
        for change in self.changes:
            out[change.kind].append(change.to_dict())
        out["total"] = self.total
        out["truncated"] = self.total > len(self.changes)
        return out

    def describe(self) -> str:
        """The reason's text: a count, then one line per kept change."""
        if self.matches:
            return "the final state is the expected one"
        counts = self.counts or Counter(c.kind for c in self.changes)
        parts = [f"{counts[k]} {k}" for k in ("changed", "added", "removed") if counts.get(k)]
        head = f"the final state differs at {self.total} path{'s' if self.total != 1 else ''}"
        lines = [f"{head} ({', '.join(parts)}):", *(c.line() for c in self.changes)]
        if self.total > len(self.changes):
            lines.append(f"... and {self.total - len(self.changes)} more")
        return "\n".join(lines)


def diff_state(expected: Any, actual: Any, match: StateMatch | None = None) -> StateDiff:
    """The structured diff of two JSON values under ``match``.

    Example:
        >>> diff_state({"a": 1, "b": [1, 2]}, {"a": 1.05, "b": [2, 1]},
        ...            StateMatch(tolerance=0.1, unordered=("/b",))).matches
        True
    """
    found: list[StateChange] = []
    counter: Counter[str] = Counter()
    try:
        _walk(expected, actual, "", match or StateMatch(), found, counter)
    except RecursionError:
        raise ScorerError("the state is nested too deeply to compare") from None
    return StateDiff(tuple(found), counter.total(), dict(counter))


def _walk(
    expected: Any,
    actual: Any,
    path: str,
    match: StateMatch,
    found: list[StateChange],
    counter: Counter[str],
) -> None:
    if _covered(path, match.ignore):
        return
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        for key in expected:
            child = f"{path}/{_escape(str(key))}"
            if key not in actual:
                if not _covered(child, match.ignore):
                    _add(found, counter, StateChange("removed", child, expected=expected[key]))
            else:
                _walk(expected[key], actual[key], child, match, found, counter)
        for key in actual:
            child = f"{path}/{_escape(str(key))}"
            if key not in expected and not _covered(child, match.ignore):
                _add(found, counter, StateChange("added", child, actual=actual[key]))
        return
    if _is_list(expected) and _is_list(actual):
        if _covered(path, match.unordered):
            _unordered(expected, actual, path, match, found, counter)
            return
        for index in range(max(len(expected), len(actual))):
            child = f"{path}/{index}"
            if index >= len(actual):
                if not _covered(child, match.ignore):
                    _add(found, counter, StateChange("removed", child, expected=expected[index]))
            elif index >= len(expected):
                if not _covered(child, match.ignore):
                    _add(found, counter, StateChange("added", child, actual=actual[index]))
            else:
                _walk(expected[index], actual[index], child, match, found, counter)
        return
    if not _same_scalar(expected, actual, match.tolerance):
        _add(found, counter, StateChange("changed", path, expected, actual))


def _unordered(
    expected: Sequence[Any],
    actual: Sequence[Any],
    path: str,
    match: StateMatch,
    found: list[StateChange],
    counter: Counter[str],
) -> None:
    """Pair each expected item with an equal actual one: equal items first (by their
    :func:`_identity`, linear), then, when the options loosen the items, the rest under them,
    greedily in order; the unpaired are removed (by their expected index) or added (by their
    actual).

    Raises:
        ScorerError: the options loosen the items and more unpaired items are left than
            :data:`MAX_PAIRINGS` comparisons allow.
    """
    inner = _inner(match, path)
    try:
        missing, left = _pair_equal(expected, actual)
    except TypeError:  # an unhashable value (only from Python): every item compared
        missing, left, exact = list(range(len(expected))), list(range(len(actual))), False
    else:
        exact = not (inner.ignore or inner.unordered or inner.tolerance)
    unpaired: list[int] = missing
    if not exact and missing and left:
        # exact matching is equality of identities, so what is left can never pair: only
        # options that loosen the items need one comparison per (expected, actual) pair
        if len(missing) * len(left) > MAX_PAIRINGS:
            raise ScorerError(
                f"the unordered list at {path or '(whole state)'}: {len(missing)} expected and "
                f"{len(left)} actual items differ, too many to pair under the matching options "
                f"(at most {MAX_PAIRINGS:,} comparisons): compare a smaller part of the state"
            )
        unpaired = []
        for i in missing:
            hit = next((j for j in left if diff_state(expected[i], actual[j], inner).matches), None)
            if hit is None:
                unpaired.append(i)
            else:
                left.remove(hit)
    for i in unpaired:
        _add(found, counter, StateChange("removed", f"{path}/{i}", expected=expected[i]))
    for j in left:
        _add(found, counter, StateChange("added", f"{path}/{j}", actual=actual[j]))


def _pair_equal(expected: Sequence[Any], actual: Sequence[Any]) -> tuple[list[int], list[int]]:
    """The indexes of the expected and of the actual items left once equal ones are paired.

    Raises:
        TypeError: an item holds a value that cannot be hashed.
    """
    spare: dict[Any, deque[int]] = {}
    for j, item in enumerate(actual):
        spare.setdefault(_identity(item), deque()).append(j)
    missing: list[int] = []
    for i, item in enumerate(expected):
        same = spare.get(_identity(item))
        if same:
            same.popleft()
        else:
            missing.append(i)
    return missing, sorted(j for js in spare.values() for j in js)


def _identity(value: Any) -> Any:
    """A hashable form of ``value``, equal for two values exactly when they match with no
    options (as :func:`_walk` compares them: any mapping, a list or tuple, a number by value
    whatever its type (``1`` and ``1.0``), a bool or other scalar only with its own type).

    Raises:
        TypeError: a value that cannot be hashed.
    """
    if isinstance(value, Mapping):
        return ("map", frozenset((key, _identity(item)) for key, item in value.items()))
    if _is_list(value):
        return ("list", tuple(_identity(item) for item in value))
    if isinstance(value, int | float) and not isinstance(value, bool):
        return ("number", value)
    hash(value)
    return (type(value), value)


def _inner(match: StateMatch, path: str) -> StateMatch:
    """The options as seen from inside one item of the unordered list at ``path``: the
    pointers through ``path`` (``*`` matching any one segment, as in :func:`_covered`) whose
    next segment is ``*`` (an index names no item of an unordered list), past it."""
    parts = path.split("/")[1:] if path else []
    depth = len(parts)

    def inside(pointers: tuple[str, ...]) -> tuple[str, ...]:
        found: list[str] = []
        for pointer in pointers:
            want = pointer.split("/")[1:] if pointer else []
            if (
                len(want) > depth
                and want[depth] == "*"
                and all(w in ("*", p) for w, p in zip(want[:depth], parts, strict=True))
            ):
                found.append("".join(f"/{w}" for w in want[depth + 1 :]))
        return tuple(dict.fromkeys(found))

    return StateMatch(inside(match.ignore), match.tolerance, inside(match.unordered))


def _add(found: list[StateChange], counter: Counter[str], change: StateChange) -> None:
    counter[change.kind] += 1
    if len(found) < MAX_DIFF_ENTRIES:
        found.append(change)


def _covered(path: str, pointers: Sequence[str]) -> bool:
    """Whether ``path`` is one of ``pointers`` or inside one (``*``: any one segment)."""
    if not pointers:
        return False
    parts = path.split("/")[1:] if path else []
    for pointer in pointers:
        want = pointer.split("/")[1:] if pointer else []
        if len(want) <= len(parts) and all(
            w in ("*", p) for w, p in zip(want, parts, strict=False)
        ):
            return True
    return False


def _is_list(value: Any) -> bool:
    return isinstance(value, list | tuple)


def _same_scalar(expected: Any, actual: Any, tolerance: float) -> bool:
    numbers = (int, float)
    if (
        isinstance(expected, numbers)
        and isinstance(actual, numbers)
        and not isinstance(expected, bool)
        and not isinstance(actual, bool)
    ):
        if not tolerance:  # exact, as the unordered lists' identities (no float rounding)
            return bool(expected == actual)
        try:
            return bool(abs(expected - actual) <= tolerance)
        except OverflowError:  # an int too big for a float: past any finite tolerance
            return False
    return bool(type(expected) is type(actual) and expected == actual)


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _shown(value: Any) -> str:
    """``value`` as JSON (text ``"1"`` is not the number ``1``), cut to :data:`_SHOWN_CHARS`."""
    text = _json(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)


def state_snapshot(value: Any, where: str = "the final state") -> Any:
    """``value`` as a JSON document (a fresh copy), checked: strict JSON (string keys, finite
    numbers) of at most :data:`MAX_STATE_BYTES`.

    Raises:
        ScorerError: not JSON, or too big; the message names ``where`` and what to do.
    """
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ScorerError(
            f"{where} is not a JSON document ({exc}): return dicts, lists, strings, finite "
            "numbers, booleans and None from the snapshot"
        ) from None
    size = len(text.encode("utf-8"))
    if size > MAX_STATE_BYTES:
        raise ScorerError(
            f"{where} takes {size:,} bytes as JSON, over the {MAX_STATE_BYTES:,}-byte cap: "
            "snapshot only what the expected state compares"
        )
    return json.loads(text)


#: the author's check over the state: a bool, a number in 0..1 or a Score
StateCheck = Callable[[Any], Any]


def compare_state(
    actual: Any,
    expected: Any = None,
    *,
    match: StateMatch | None = None,
    verdict: Any = None,
    has_expected: bool = True,
) -> Score:
    """Score ``actual``: 1 when it matches ``expected`` (and the author's check's ``verdict``,
    when not ``None``, holds), else 0 with the diff in the reason and metadata
    (``state_diff``)."""
    diff = diff_state(expected, actual, match) if has_expected else StateDiff()
    metadata: dict[str, Any] = {}
    reasons: list[str] = []
    passed = diff.matches
    if has_expected:
        metadata["state_diff"] = diff.to_dict()
        if not diff.matches:
            reasons.append(diff.describe())
    if verdict is not None:
        held, why = _held(verdict)
        metadata["state_check"] = held
        if not held:
            passed = False
            reasons.append(f"the state check failed{': ' + why if why else ''}")
    if passed:
        return Score(1.0, reason="the final state is the expected one", metadata=metadata)
    return Score(0.0, reason="\n".join(reasons), metadata=metadata)


def _held(verdict: Any) -> tuple[bool, str]:
    if isinstance(verdict, Score):
        return verdict.value is not None and verdict.value >= 1.0, verdict.reason or ""
    if isinstance(verdict, bool):
        return verdict, ""
    if isinstance(verdict, int | float) and 0.0 <= verdict <= 1.0:
        return verdict >= 1.0, f"scored {verdict:g}"
    raise ScorerError(
        f"the state check returned {verdict!r}; return a bool, a number in 0..1 or a Score"
    )


@scorer
async def final_state(
    prediction: Any,
    *,
    example: Any = None,
    output: Any = None,
    check: StateCheck | None = None,
    ignore: Sequence[str] = (),
    tolerance: float = 0.0,
    unordered: Sequence[str] = (),
) -> Score:
    """1 when the episode's final state matches the row's ``expected_state`` (and the author's
    ``check`` over the state holds), else 0 with the diff; n/a when there is nothing to check.

    The row may loosen the match with ``state_match`` (``ignore``, ``tolerance``,
    ``unordered``), added to the author's options; only the author gives ``check``.
    """
    if check is not None and not callable(check):
        raise ConfigError("final_state.check: expected a Python function of the state")
    try:
        author = StateMatch(tuple(ignore), tolerance, tuple(unordered))
    except ValueError as exc:
        raise ConfigError(f"final_state.{exc}") from None
    fields = getattr(example, "fields", None) or {}
    row = getattr(example, "id", "?")
    has_expected = "expected_state" in fields and fields["expected_state"] is not None
    if not has_expected and check is None:
        return Score(None, reason="the row has no expected_state")
    try:
        match = author.merged(StateMatch.parse(fields.get("state_match"), "state_match"))
    except ValueError as exc:
        raise DatasetError(f"row {row!r}: {exc}") from None
    actual = _actual_state(prediction, example, output)
    verdict = await _checked(check, actual)
    return compare_state(
        actual,
        fields.get("expected_state"),
        match=match,
        verdict=verdict,
        has_expected=has_expected,
    )


async def _checked(check: StateCheck | None, state: Any) -> Any:
    """The author's check's verdict over ``state`` (awaited when it is async)."""
    if check is None:
        return None
    verdict = check(state)
    return await verdict if inspect.isawaitable(verdict) else verdict


def _actual_state(prediction: Any, example: Any, output: Any) -> Any:
    """The state the episode left, from the first place that records one.

    Raises:
        ScorerError: nothing records a state, or it is not a JSON document within the cap.
    """
    if isinstance(output, CarriesFinalState):
        if output.final_state_error is not None:
            raise ScorerError(f"the final state was not recorded: {output.final_state_error}")
        if output.final_state is not None:
            return output.final_state
    outputs = getattr(output, "outputs", None)
    if isinstance(outputs, Mapping) and FINAL_STATE_KEY in outputs:
        return state_snapshot(outputs[FINAL_STATE_KEY], "the run's final_state output")
    if isinstance(output, Mapping) and FINAL_STATE_KEY in output:
        return state_snapshot(output[FINAL_STATE_KEY], "the output's final_state")
    recorded = getattr(example, "prediction", None)
    fields = getattr(example, "fields", None) or {}
    if recorded is not None:
        if FINAL_STATE_KEY in fields:
            return state_snapshot(fields[FINAL_STATE_KEY], "the row's final_state")
        parsed = _json_object(prediction if isinstance(prediction, str) else recorded)
        if parsed is not None and FINAL_STATE_KEY in parsed:
            return state_snapshot(parsed[FINAL_STATE_KEY], "the prediction's final_state")
    raise ScorerError(
        "no final state was recorded: a conversation records its environment's snapshot, a "
        "workflow run its final_state output, a recorded row its final_state field (or a "
        "prediction that is a JSON object with final_state)"
    )


def _json_object(text: Any) -> Mapping[str, Any] | None:
    if not isinstance(text, str) or not text.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, Mapping) else None


def final_state_matches(
    *,
    actual: Any,
    expected: Any = None,
    ignore: Sequence[str] = (),
    tolerance: float = 0.0,
    unordered: Sequence[str] = (),
    check: StateCheck | None = None,
    state_match: Mapping[str, Any] | None = None,
) -> GateResult:
    """Gate: the final state matches the expected one (and the author's check holds)."""
    name = "final_state_matches"
    if expected is None and check is None:
        return GateResult(name, False, "no expected_state (nor state check) to hold it against")
    if actual is None:
        return GateResult(name, False, "the run recorded no final state")
    match = StateMatch(tuple(ignore), tolerance, tuple(unordered)).merged(
        StateMatch.parse(state_match, "state_match")
    )
    try:
        state = state_snapshot(actual, "the run's final state")
        verdict = None if check is None else check(state)
        score = compare_state(
            state, expected, match=match, verdict=verdict, has_expected=expected is not None
        )
    except ScorerError as exc:  # this run's gate fails; the other runs are graded as usual
        return GateResult(name, False, str(exc))
    return GateResult(name, score.value == 1.0, score.reason or "", dict(score.metadata or {}))


register_gate("final_state_matches", final_state_matches)
