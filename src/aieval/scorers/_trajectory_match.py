"""Pair the calls an agent made with the calls expected: the best pairing, the mode's verdict
and its partial credit.

The pairing is optimal and deterministic. Ordered modes (``strict``, ``in_order``) align the
two sequences as a longest common subsequence does; unordered modes (``unordered``,
``subset``, ``superset``) take a maximum bipartite matching. Either way the pairing first has
the most matches (same tool, arguments agreeing), then the most pairs of the same tool whose
arguments differ; in ordered modes an expected call and a made call left between the same two
aligned pairs are paired as a substitution (the wrong tool at that step).

Parallel calls have no order: in ordered modes the calls made in one batch (one assistant
message, turn or step: :attr:`aieval.core.ToolUse.batch`) are first put in the expected order
as far as possible, so a reordered batch matches in full; calls of different batches keep
their order.

Each mode holds exactly when its partial credit is 1.0:

- ``strict``: the same calls in the same order; credit F1.
- ``unordered``: the same calls in any order (the same multiset); credit F1.
- ``in_order``: the expected calls appear in order among the calls made, others allowed
  between them; credit recall (expected calls matched).
- ``superset``: every expected call was made, in any order; credit recall.
- ``subset``: every call made is among the expected ones; credit precision (calls made that
  matched).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from aieval.core import ToolMatch, ToolUse, Trajectory

__all__ = ["MODES", "credit", "describe", "mode_holds", "pair"]

#: how calls are matched
MODES = ("strict", "in_order", "unordered", "subset", "superset")

_ORDERED = frozenset({"strict", "in_order"})

#: ``compare(expected_index, called_index)``: ``None`` for different tools, else whether the
#: arguments agree (``None`` inside: not compared)
Compare = Callable[[int, int], "tuple[bool | None] | None"]


def pair(
    called: Sequence[ToolUse],
    expected: Sequence[ToolUse],
    compare: Compare,
    *,
    mode: str,
) -> tuple[ToolMatch, ...]:
    """The best pairing of ``called`` with ``expected`` under ``mode`` (see the module)."""
    table: dict[tuple[int, int], bool | None] = {}
    for e in range(len(expected)):
        for c in range(len(called)):
            found = compare(e, c)
            if found is not None:
                table[e, c] = found[0]
    if mode in _ORDERED:
        # parallel calls have no order: each batch made follows the expected order (the
        # expected calls are read in the order written)
        order = _batch_order(called, len(expected), table)
        at = {c: i for i, c in enumerate(order)}
        moved = {(e, at[c]): same for (e, c), same in table.items()}
        return tuple(
            ToolMatch(m.expected, None if m.called is None else order[m.called], m.arguments_match)
            for m in _aligned(len(called), len(expected), moved)
        )
    return _matched(len(called), len(expected), table)


def _batch_order(
    called: Sequence[ToolUse], n_expected: int, table: dict[tuple[int, int], bool | None]
) -> list[int]:
    """The called indices in the order the alignment reads them: the calls of one batch
    (consecutive calls with the same ``batch``: issued together, no order among them) follow
    the expected order as far as possible; batches, and calls without one, keep their order.

    Each call takes the first expected call not yet taken that it matches (then the first of
    the same tool), batch by batch in order; a batch is sorted by those positions, stably,
    calls that took none last. Deterministic."""
    runs: list[list[int]] = []
    for c, use in enumerate(called):
        if runs and use.batch is not None and called[runs[-1][0]].batch == use.batch:
            runs[-1].append(c)
        else:
            runs.append([c])
    taken: set[int] = set()
    order: list[int] = []
    for run in runs:
        place: dict[int, int] = {}
        for agreeing in (True, False):  # matches first, then same-tool pairs
            for c in run:
                for e in range(n_expected) if c not in place else ():
                    if (
                        e not in taken
                        and (e, c) in table
                        and not (agreeing and table[e, c] is False)
                    ):
                        place[c] = e
                        taken.add(e)
                        break
        order += sorted(run, key=lambda c: place.get(c, n_expected))
    return order


def _aligned(
    n_called: int, n_expected: int, table: dict[tuple[int, int], bool | None]
) -> tuple[ToolMatch, ...]:
    """An alignment with the most matches, then the most same-tool pairs (LCS by weights)."""
    big = n_called + n_expected + 1  # one match outweighs any number of same-tool pairs

    def gain(e: int, c: int) -> int:
        if (e, c) not in table:
            return -1
        return big if table[e, c] is not False else 1

    best = [[0] * (n_called + 1) for _ in range(n_expected + 1)]
    for e in range(n_expected - 1, -1, -1):
        row, below = best[e], best[e + 1]
        for c in range(n_called - 1, -1, -1):
            value = max(below[c], row[c + 1])
            g = gain(e, c)
            if g > 0:
                value = max(value, g + below[c + 1])
            row[c] = value
    pairs: list[tuple[int, int]] = []
    e = c = 0
    while e < n_expected and c < n_called:
        g = gain(e, c)
        if g > 0 and best[e][c] == g + best[e + 1][c + 1]:
            pairs.append((e, c))
            e, c = e + 1, c + 1
        elif best[e][c] == best[e + 1][c]:
            e += 1
        else:
            c += 1
    return _with_gaps(pairs, n_called, n_expected, table)


def _with_gaps(
    pairs: list[tuple[int, int]],
    n_called: int,
    n_expected: int,
    table: dict[tuple[int, int], bool | None],
) -> tuple[ToolMatch, ...]:
    """The aligned pairs in order, with the calls left between two of them paired in order as
    substitutions and the rest as missing (expected) or extra (called)."""
    out: list[ToolMatch] = []
    e0 = c0 = 0
    for e1, c1 in [*pairs, (n_expected, n_called)]:
        gap_e, gap_c = list(range(e0, e1)), list(range(c0, c1))
        for e, c in zip(gap_e, gap_c, strict=False):
            out.append(ToolMatch(expected=e, called=c))
        out += [ToolMatch(expected=e, called=None) for e in gap_e[len(gap_c) :]]
        out += [ToolMatch(expected=None, called=c) for c in gap_c[len(gap_e) :]]
        if e1 < n_expected:
            out.append(ToolMatch(expected=e1, called=c1, arguments_match=table[e1, c1]))
        e0, c0 = e1 + 1, c1 + 1
    return tuple(out)


def _matched(
    n_called: int, n_expected: int, table: dict[tuple[int, int], bool | None]
) -> tuple[ToolMatch, ...]:
    """A maximum matching of agreeing pairs, then of same-tool pairs among the rest."""
    owner: dict[int, int] = {}  # called index -> expected index
    agreeing = {
        e: [c for c in range(n_called) if (e, c) in table and table[e, c] is not False]
        for e in range(n_expected)
    }
    for e in range(n_expected):
        _augment(e, agreeing, owner, set())
    taken_e = set(owner.values())
    same = {
        e: [c for c in range(n_called) if (e, c) in table and c not in owner]
        for e in range(n_expected)
        if e not in taken_e
    }
    second: dict[int, int] = {}
    for e in same:
        _augment(e, same, second, set())
    owner |= second
    by_expected = {e: c for c, e in owner.items()}
    out = [
        ToolMatch(expected=e, called=by_expected.get(e), arguments_match=table.get((e, c)))
        if (c := by_expected.get(e)) is not None
        else ToolMatch(expected=e, called=None)
        for e in range(n_expected)
    ]
    out += [ToolMatch(expected=None, called=c) for c in range(n_called) if c not in owner]
    return tuple(out)


def _augment(e: int, edges: dict[int, list[int]], owner: dict[int, int], seen: set[int]) -> bool:
    """Kuhn's augmenting path from expected call ``e`` (calls tried in order: deterministic)."""
    for c in edges.get(e, ()):
        if c in seen:
            continue
        seen.add(c)
        if c not in owner or _augment(owner[c], edges, owner, seen):
            owner[c] = e
            return True
    return False


def credit(trajectory: Trajectory) -> float:
    """The mode's partial credit: 1.0 exactly when the mode holds (see the module)."""
    if trajectory.mode in ("in_order", "superset"):
        return 1.0 if trajectory.recall is None else trajectory.recall
    if trajectory.mode == "subset":
        return 1.0 if trajectory.precision is None else trajectory.precision
    return trajectory.f1


def mode_holds(trajectory: Trajectory) -> bool:
    """Whether the mode's condition holds (its credit is 1.0)."""
    return credit(trajectory) == 1.0


def describe(trajectory: Trajectory) -> str:
    """The pairing in words: ``matched search, weather; missing book; extra delete_user
    (forbidden)``; under an ordered mode, an expected call made elsewhere in the order is
    ``out of order`` (not missing and extra)."""
    called, expected = trajectory.called, trajectory.expected
    banned = set(trajectory.forbidden)
    matched: list[str] = []
    wrong_args: list[str] = []
    swapped: list[str] = []
    missing: list[str] = []
    extra: list[str] = []
    for m in trajectory.matches:
        if m.expected is not None and m.called is not None:
            want, got = expected[m.expected].name, called[m.called].name
            if want != got:
                swapped.append(f"{_shown(got, banned)} instead of {want}")
            elif trajectory.is_match(m):
                matched.append(_shown(got, banned))
            else:
                wrong_args.append(_shown(got, banned))
        elif m.expected is not None:
            missing.append(expected[m.expected].name)
        elif m.called is not None:
            extra.append(_shown(called[m.called].name, banned))
    late: list[str] = []
    if trajectory.mode in ("strict", "in_order"):  # a call made, but not where expected
        for name in list(missing):
            if _shown(name, banned) in extra:
                missing.remove(name)
                extra.remove(_shown(name, banned))
                late.append(_shown(name, banned))
    parts = [
        f"{label} {', '.join(names)}"
        for label, names in (
            ("matched", matched),
            ("wrong arguments for", wrong_args),
            ("called", swapped),
            ("out of order", late),
            ("missing", missing),
            ("extra", extra),
        )
        if names
    ]
    return "; ".join(parts) if parts else "no call made and none expected"


def _shown(name: str, banned: set[str]) -> str:
    return f"{name} (forbidden)" if name in banned else name
