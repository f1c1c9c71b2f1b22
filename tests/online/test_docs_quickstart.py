"""docs/online.md's quick start: its rules file is one the server reads as it is."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from aieval.online import load_rules

PAGE = Path(__file__).resolve().parents[2] / "docs" / "online.md"


def test_the_quick_starts_rules_file_reads(tmp_path: Path) -> None:
    text = PAGE.read_text(encoding="utf-8")
    found = re.search(r"```yaml\n(\s*# online\.yaml\n.*?)```", text, re.S)
    assert found is not None
    file = tmp_path / "online.yaml"
    file.write_text(textwrap.dedent(found.group(1)), encoding="utf-8")
    (rule,) = load_rules(file)
    assert rule.name == "support-answers" and rule.sampling_rate == 0.2
    assert rule.review == "support-doubts" and rule.budget.calls_per_hour == 300
