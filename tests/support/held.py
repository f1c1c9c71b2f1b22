"""Runs a test holds mid-run: rows that name a gate file wait in their scorer until it exists.

A test interrupts or kills such a run while it provably cannot finish, however slowly a busy
machine lets the test poll, and opens the gate (creates the file) once it is done with it.
"""

from __future__ import annotations

import json
from pathlib import Path

#: An eval file's scorer module: ``held`` scores 1.0 once the row's ``hold_until`` file exists.
#: It waits asynchronously, so an interrupted run's event loop cancels it at once; after ten
#: minutes it gives up, so a forgotten gate cannot leave a stray process behind.
HELD_SCORER = '''\
import asyncio
import os
import time

from aieval import scorer


@scorer
async def held(prediction, expected, *, example=None):
    """1.0, once the file this row names in ``hold_until`` exists."""
    gate = example.fields.get("hold_until") if example is not None else None
    deadline = time.monotonic() + 600
    while gate and not os.path.exists(gate) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return 1.0
'''


def held_eval(directory: Path, *, name: str, rows: int, held_from: int, settings: str = "") -> Path:
    """Write ``<name>.yaml`` (with ``rows.jsonl`` and ``held.py``) into ``directory``.

    Rows from index ``held_from`` on wait for the returned gate path to exist. ``settings`` is
    the eval file's ``settings:`` mapping in flow style (``{concurrency: 2}``), if any.
    """
    gate = directory / "gate"
    with (directory / "rows.jsonl").open("w") as handle:
        for i in range(rows):
            row = {"id": f"r{i}", "prompt": "p", "expected": "x", "prediction": "x"}
            if i >= held_from:
                row["hold_until"] = str(gate)
            handle.write(json.dumps(row) + "\n")
    (directory / "held.py").write_text(HELD_SCORER)
    lines = [f"name: {name}", "dataset: rows.jsonl", "imports: [held.py]", "scorers: [held]"]
    if settings:
        lines.append(f"settings: {settings}")
    (directory / f"{name}.yaml").write_text("\n".join(lines) + "\n")
    return gate
