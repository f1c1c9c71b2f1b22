from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from tests.support.reports import (
    HOSTILE_ID,
    blocking_comparison,
    graded_report,
    promoting_comparison,
    ungraded_report,
)

from aieval.report import render_html
from aieval.report._html import CSP

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"


class _Tags(HTMLParser):
    """Every start tag with its attributes, and the text inside <script> (there must be none)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags(page: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(page)
    return parser.tags


def test_page_is_self_contained(document: dict[str, Any]) -> None:
    page = render_html(document)
    tags = _tags(page)
    names = {t for t, _ in tags}
    assert "script" not in names and "link" not in names and "img" not in names
    for _, attrs in tags:
        for key in ("src", "href"):
            assert not (attrs.get(key) or "").startswith(("http:", "https:", "//"))
    assert not re.search(r"url\(\s*['\"]?(https?:)?//", page)
    assert ("meta", {"http-equiv": "Content-Security-Policy", "content": CSP}) in tags


@pytest.mark.parametrize(
    ("doc", "titles"),
    [
        pytest.param(
            graded_report(),
            ["Grade distribution", "Gate failure rates", "Criterion distributions"],
            id="graded",
        ),
        pytest.param(ungraded_report(), ["Criterion distributions"], id="ungraded"),
        pytest.param(
            promoting_comparison(),
            ["Weighted score delta", "Pass rate and criterion deltas", "Gate failure rate deltas"],
            id="promote",
        ),
    ],
)
def test_plots_are_accessible_svgs(doc: dict[str, Any], titles: list[str]) -> None:
    page = render_html(doc)
    svgs = re.findall(r"<svg\b[^>]*>.*?</svg>", page, flags=re.S)
    assert len(svgs) == len(titles)
    for svg, title in zip(svgs, titles, strict=True):
        assert 'role="img"' in svg and "<desc>" in svg
        assert re.match(r"<svg\b[^>]*><title>" + re.escape(title), svg)


def test_grade_bars_are_proportional_to_counts() -> None:
    doc = graded_report()
    page = render_html(doc)
    heights = {
        grade: float(h)
        for h, grade in re.findall(r'height="([\d.]+)" fill="#[0-9a-f]+"><title>grade (\w):', page)
    }
    top = max(doc["grades"].values())
    for grade, count in doc["grades"].items():
        assert heights[grade] == pytest.approx(150 * count / top, abs=0.1)


def test_forest_plot_draws_the_margin_line() -> None:
    doc = blocking_comparison()
    page = render_html(doc)
    margin = doc["decision"]["policy"]["noninferiority_margin"]
    assert f"margin −{margin:g}" in page
    assert 'stroke-dasharray="5 4"' in page


@pytest.mark.parametrize(
    "doc",
    [pytest.param(graded_report(), id="report"), pytest.param(blocking_comparison(), id="cmp")],
)
def test_untrusted_text_is_escaped(doc: dict[str, Any]) -> None:
    page = render_html(doc)
    assert HOSTILE_ID not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>off-by-one</b>" not in page


def test_decision_banner_matches_the_decision() -> None:
    assert 'class="verdict promote"' in render_html(promoting_comparison())
    assert 'class="verdict block"' in render_html(blocking_comparison())


# --- the page in a real browser -------------------------------------------------------------


def _png_size_and_colours(path: Path) -> tuple[int, int, set[bytes]]:
    """Width, height and the distinct pixel colours of an 8-bit RGB/RGBA PNG (stdlib only)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, header = 8, [], b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, colour_type = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour_type in (2, 6), "chromium writes 8-bit RGB(A)"
    channels = 3 if colour_type == 2 else 4
    raw, stride = zlib.decompress(b"".join(chunks)), width * channels
    previous, colours = bytearray(stride), set()
    for row in range(height):
        start = row * (stride + 1)
        line = _unfilter(
            raw[start], bytearray(raw[start + 1 : start + 1 + stride]), previous, channels
        )
        colours.update(bytes(line[i : i + 3]) for i in range(0, stride, channels * 7))
        previous = line
    return width, height, colours


def _unfilter(kind: int, line: bytearray, prev: bytearray, bpp: int) -> bytearray:
    for i in range(len(line)):
        left = line[i - bpp] if i >= bpp else 0
        up, up_left = prev[i], prev[i - bpp] if i >= bpp else 0
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 2:
            line[i] = (line[i] + up) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (left + up) // 2) & 0xFF
        elif kind == 4:
            p = left + up - up_left
            pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
            pred = left if pa <= pb and pa <= pc else up if pb <= pc else up_left
            line[i] = (line[i] + pred) & 0xFF
    return line


def _chromium(*args: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    profile = tmp / "chromium-profile"
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--window-size=1280,2000",
    ]
    return subprocess.run(
        [CHROMIUM, *flags, *args], capture_output=True, text=True, timeout=90, check=False
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[str]:
    if not (os.path.exists(CHROMIUM) and shutil.which(CHROMIUM)):
        pytest.skip("Debian's chromium is not installed (bash scripts/browser.sh installs it)")
    yield CHROMIUM


@pytest.mark.parametrize(
    ("name", "doc", "plot_colour"),
    [
        pytest.param("report", graded_report(), bytes.fromhex("cf222e"), id="report"),
        pytest.param("comparison", blocking_comparison(), bytes.fromhex("cf222e"), id="comparison"),
    ],
)
def test_screenshot_in_headless_chromium(
    browser: str, tmp_path: Path, name: str, doc: dict[str, Any], plot_colour: bytes
) -> None:
    page = tmp_path / f"{name}.html"
    page.write_text(render_html(doc), encoding="utf-8")
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / f"report-{name}.png"
    shot.unlink(missing_ok=True)
    result = _chromium(f"--screenshot={shot}", page.as_uri(), tmp=tmp_path)
    assert shot.exists(), result.stderr[-2000:]
    width, height, colours = _png_size_and_colours(shot)
    assert (width, height) == (1280, 2000)
    assert len(colours) > 20, "a blank page has a handful of colours"
    assert plot_colour in colours, "the plots' red is drawn"


def test_svgs_are_in_the_rendered_dom(browser: str, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(graded_report()), encoding="utf-8")
    result = _chromium("--dump-dom", page.as_uri(), tmp=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout
    assert len(re.findall(r"<svg\b", dom)) == 3
    assert "<title>Grade distribution</title>" in dom
    assert "<script>alert(1)</script>" not in dom
