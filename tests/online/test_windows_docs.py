"""docs/online.md says what the alert code does: the field table's ``alpha`` default is the
code's, and the example rule's alert does not use a level the page shows to alert falsely."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from aieval.online import AlertPolicy

PAGE = Path(__file__).resolve().parents[2] / "docs" / "online.md"


def test_the_alpha_default_and_the_example_are_the_codes() -> None:
    text = PAGE.read_text(encoding="utf-8")
    (default,) = re.findall(r"`alpha` \(0 < a < 1, default ([0-9.]+)\)", text)
    assert float(default) == AlertPolicy().alpha == 0.001
    example = re.search(r"```yaml\n(# rules\.yaml.*?)```", text, re.S)
    assert example is not None
    (rule,) = yaml.safe_load(example.group(1))["rules"]
    # the page measures 1-2 false alerts a week for alpha 0.01 with baseline `previous`
    assert rule["alert"]["baseline"] == "previous" and rule["alert"]["alpha"] <= 0.001
