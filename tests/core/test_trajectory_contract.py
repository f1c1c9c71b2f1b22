"""The stored trajectory contract: figures, pairing rule and a strict round trip."""

from __future__ import annotations

import pytest

from aieval.core import ToolMatch, ToolUse, Trajectory
from aieval.errors import ConfigError


def _sample() -> Trajectory:
    return Trajectory(
        called=(
            ToolUse("search", {"q": "oslo"}),
            ToolUse("weather", {"city": "Oslo"}, error="timeout"),
            ToolUse("delete_user", {"id": 3}),
        ),
        expected=(ToolUse("search", {"q": "oslo"}), ToolUse("forecast", {"city": "Oslo"})),
        matches=(ToolMatch(0, 0, True), ToolMatch(1, 1, None), ToolMatch(None, 2, None)),
        forbidden=("delete_user",),
    )


def test_figures_count_same_tool_pairs_only() -> None:
    trajectory = _sample()
    assert trajectory.matched == 1  # the weather/forecast pair is a substitution
    assert trajectory.precision == pytest.approx(1 / 3)
    assert trajectory.recall == pytest.approx(1 / 2)
    assert trajectory.f1 == pytest.approx(2 * 1 / 5)
    assert trajectory.forbidden_hits == ("delete_user",)


def test_round_trip_and_strict_reading() -> None:
    trajectory = _sample()
    assert Trajectory.from_dict(trajectory.to_dict()) == trajectory
    bad = trajectory.to_dict()
    bad["called"][1]["extra"] = 1
    with pytest.raises(ConfigError, match=r"trajectory.called\[1\]: unknown field 'extra'"):
        Trajectory.from_dict(bad)


def test_matches_must_cover_every_call_once() -> None:
    with pytest.raises(ConfigError, match="pair every called"):
        Trajectory(called=(ToolUse("a"),), expected=(ToolUse("a"),), matches=(ToolMatch(0, None),))


def test_nothing_expected_nothing_called_is_full_credit() -> None:
    assert Trajectory(called=()).f1 == 1.0


def test_batch_is_written_only_when_known_and_read_strictly() -> None:
    plain = ToolUse("search", {"q": "oslo"})
    assert "batch" not in plain.to_dict()  # stored trajectories without it read back the same
    assert ToolUse.from_dict(plain.to_dict(), "t") == plain
    parallel = ToolUse("search", {"q": "oslo"}, batch=2)
    assert parallel.to_dict()["batch"] == 2
    assert ToolUse.from_dict(parallel.to_dict(), "t") == parallel
    assert ToolUse.from_dict({**plain.to_dict(), "batch": None}, "t") == plain
    for bad in (-1, 1.0, True, "2"):
        with pytest.raises(ConfigError, match=r"t\.batch: expected a message index or null"):
            ToolUse.from_dict({**plain.to_dict(), "batch": bad}, "t")
