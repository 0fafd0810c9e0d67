"""The HTML report (`--html FILE`) in a real headless browser: Debian's Chromium driven by
Playwright for Python (pointed at the system's executable; no browser download). What a person
would see is checked: one timeline lane per group, coverage segments that add up to the
corpus, every finding's path:line, no request leaving the page, a screenshot that is not
blank, the page whole with scripting off, in a narrow window and printed on A4.

Skipped, with the reason, when Playwright or a Chromium executable cannot be had (`.ci/run`
installs both)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BGL = ROOT / "evals" / "data" / "loghub" / "BGL_2k.log"


def _chromium() -> str | None:
    for name in (os.environ.get("RLM_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and (shutil.which(name) or Path(name).is_file()):
            return shutil.which(name) or name
    return None


sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not "
                               "installed (pip install playwright; .ci/run does it)")
if _chromium() is None:
    pytest.skip("no Chromium executable (apt-get install chromium, or set RLM_CHROMIUM); "
                ".ci/run installs it", allow_module_level=True)


def rlm(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "rlm.cli", *args], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


def _lanes(rep: dict) -> int:
    """One lane per event kind (the report's kinds with their example lines), else per group."""
    kinds = [k for k in rep.get("event_kinds") or [] if k.get("examples")]
    return len(kinds) or len(rep["groups"])


def _open(browser, path: Path, **ctx):
    """A page on the file, with every request the page makes recorded."""
    context = browser.new_context(**ctx)
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return context, page, requests


def _not_blank(browser, png: bytes) -> int:
    """Distinct colours in a screenshot, counted by the browser itself (a canvas)."""
    ctx = browser.new_context()
    page = ctx.new_page()
    page.set_content("<canvas id=c></canvas>")
    n = page.evaluate("""async (b64) => {
      const img = new Image(); img.src = 'data:image/png;base64,' + b64; await img.decode();
      const c = document.getElementById('c'); c.width = img.width; c.height = img.height;
      const g = c.getContext('2d'); g.drawImage(img, 0, 0);
      const d = g.getImageData(0, 0, c.width, c.height).data; const seen = new Set();
      for (let i = 0; i < d.length; i += 4 * 7) seen.add((d[i] << 16) | (d[i+1] << 8) | d[i+2]);
      return seen.size; }""", base64.b64encode(png).decode())
    ctx.close()
    return n


def _bar_adds_up(page, total: int, unit: str = "lines") -> None:
    got = page.evaluate("""(unit) => {
      const bar = document.querySelector('svg.bar[data-unit="' + unit + '"]');
      const segs = [...bar.querySelectorAll('rect.seg')];
      return {n: segs.reduce((s, r) => s + Number(r.dataset[unit]), 0),
              w: segs.reduce((s, r) => s + r.getBoundingClientRect().width, 0),
              bar: bar.getBoundingClientRect().width - 2, total: Number(bar.dataset.total)}
    }""", unit)
    assert got["n"] == total == got["total"], got
    assert abs(got["w"] - got["bar"]) <= 1.5, got  # the segments fill the bar, no more


def _bytes_bar_adds_up(page, files: dict) -> None:
    """audit and mine: one segment per measured file, each as wide as its bytes (as the
    browser lays it out), their bytes summing to the corpus's; with the strip of entries the
    walker did not measure, every listed file is drawn once."""
    got = page.evaluate("""() => {
      const bar = document.querySelector('svg.bar[data-unit="bytes"]');
      const w = bar.getBoundingClientRect().width - 2;
      const segs = [...bar.querySelectorAll('rect.seg')].map(r => ({path: r.dataset.path,
        bytes: Number(r.dataset.bytes), files: Number(r.dataset.files),
        share: r.getBoundingClientRect().width / w}));
      const other = [...document.querySelectorAll('svg.bar.unsized rect.seg')]
        .reduce((s, r) => s + Number(r.dataset.files), 0);
      return {segs, other, total: Number(bar.dataset.total)}; }""")
    sizes = files["sizes"]
    segs = got["segs"]
    assert {s["path"]: s["bytes"] for s in segs} == {p: sizes[p] for p in (s["path"] for s in segs)}
    assert sum(s["bytes"] for s in segs) == got["total"] > 0
    for s in segs:  # widths proportional to size, to a pixel of the bar
        assert abs(s["share"] - s["bytes"] / got["total"]) < 0.003, s
    assert sum(s["files"] for s in segs) + got["other"] == files["total"]


@pytest.fixture(scope="module")
def bgl_run(tmp_path_factory):
    """`rlm ask BGL_2k.log "anomalies?"` with no model: the JSON report and the page."""
    d = tmp_path_factory.mktemp("bgl")
    html = d / "bgl.html"
    r = rlm("ask", str(BGL), "anomalies?", "--model", "none", "--json", "--html", str(html))
    assert r.returncode in (0, 3), r.stderr
    return json.loads(r.stdout), html


def test_log_answer_page(browser, bgl_run):
    rep, html = bgl_run
    ctx, page, requests = _open(browser, html)
    assert rep["groups"], "the profile found no group: nothing to draw"
    lanes = page.locator(".lane").count()
    assert lanes == _lanes(rep) > 1  # one lane per event kind (or group)
    assert page.locator("[data-axis=time]").count() == 1  # BGL lines carry times
    _bar_adds_up(page, rep["corpus"]["lines"])
    text = page.inner_text("body")
    for f in rep["findings"]:
        s = f["source"]
        ref = f"{s['path']}:{s['line_start']}" + (
            f"-{s['line_end']}" if s["line_end"] != s["line_start"] else "")
        assert ref in text, ref
    assert rep["coverage"]["statement"] in text  # word for word, under the bar
    assert requests == [html.as_uri()]  # nothing but the page itself
    assert _not_blank(browser, page.screenshot()) > 20  # the first screen
    ctx.close()


def _drawn_at(page, key: str, place: float) -> str:
    """What the browser hit-tests at `place` (0..1) along lane `key`'s strip, half-way up: the
    class of the mark or shade there, or "empty"."""
    page.locator(f'.lane[data-lane="{key}"]').scroll_into_view_if_needed()
    return page.evaluate("""([key, f]) => {
      const s = document.querySelector('.lane[data-lane="' + key + '"] svg.strip');
      const b = s.getBoundingClientRect();
      const el = document.elementFromPoint(b.left + f * b.width, b.top + b.height / 2);
      return el === s ? 'empty' : (el.getAttribute('class') || el.tagName); }""", [key, place])


def test_a_burst_and_a_silence_show_at_a_glance(browser, tmp_path):
    """500 disk errors in one minute at 10:00 of a 24-hour log, and a retry warning every 30 s
    that stops from 14:00 to 16:00: the burst is the darkest shade at 10:00 of its lane and
    nothing elsewhere; the silence is an empty stretch of the other lane."""
    from tests.corpus.test_lanes import BURST_AT, SILENT, day_log

    log, html = tmp_path / "day.log", tmp_path / "day.html"
    where = day_log(log)
    r = rlm("ask", str(log), "anomalies?", "--model", "none", "--json", "--html", str(html))
    assert r.returncode in (0, 3), r.stderr
    rep = json.loads(r.stdout)
    ids = {k["template"]: k["id"] for k in rep["event_kinds"]}
    burst = next(f"kind-{i}" for t, i in ids.items() if "disk failure" in t)
    retry = next(f"kind-{i}" for t, i in ids.items() if "retrying" in t)
    ctx, page, requests = _open(browser, html)
    assert page.locator("[data-axis=time]").count() == 1
    assert page.locator(".lane").count() == len(rep["event_kinds"])
    day = 86_398  # the log's first to last time
    assert _drawn_at(page, burst, (BURST_AT + 30) / day) == "density d5"
    for hour in (1, 5, 9.5, 11, 15, 20):
        assert _drawn_at(page, burst, hour * 3600 / day) == "empty", hour
    for hour in (14.3, 15, 15.7):
        assert _drawn_at(page, retry, hour * 3600 / day) == "empty", hour
    for hour in (1, 8, 13.5, 16.5, 23):
        assert _drawn_at(page, retry, hour * 3600 / day).startswith("density"), hour
    # the pointer on the burst: the slice's exact count and its clock
    box = page.locator(f'.lane[data-lane="{burst}"] svg.strip').bounding_box()
    page.mouse.move(box["x"] + box["width"] * (BURST_AT + 30) / day, box["y"] + box["height"] / 2)
    tip = page.inner_text(".tip")
    assert tip.startswith("500 lines, 09:5") or tip.startswith("500 lines, 10:0"), tip
    label = page.inner_text(f'.lane[data-lane="{retry}"] .lane-label')
    assert f"{len(where['retry']):,} lines" in label
    ticks = page.inner_text(".axis")
    assert "06:00" in ticks and "12:00" in ticks and "18:00" in ticks
    assert requests == [html.as_uri()]
    ctx.close()


def test_a_real_log_has_a_lane_per_kind_on_its_own_clock(browser, tmp_path):
    """LogHub's HDFS 2k sample: one lane per event kind; the 80 `exception while serving`
    warnings over its 37 hours are a shaded strip (every line counted, bins summing to 80),
    the few-line kinds have a tick per line; the axis runs from the file's first time to its
    last, as the file writes them (`081109 203615`)."""
    log, html = BGL.with_name("HDFS_2k.log"), tmp_path / "hdfs.html"
    r = rlm("ask", str(log), "anomalies?", "--model", "none", "--json", "--html", str(html))
    assert r.returncode in (0, 3), r.stderr
    rep = json.loads(r.stdout)
    tl = rep["timeline"]
    ctx, page, requests = _open(browser, html)
    assert page.locator(".lane").count() == len(rep["event_kinds"]) > 1
    note = page.inner_text("[data-axis=time]")
    assert f"from {tl['time']['first_seen']} to {tl['time']['last_seen']}" in note
    assert tl["time"]["first_seen"] == "081109 203615"
    for k in rep["event_kinds"]:
        lane, rec = f'.lane[data-lane="kind-{k["id"]}"]', tl["kinds"][str(k["id"])]
        if k["count"] > 60:
            assert sum(rec["time_bins"]) == sum(rec["line_bins"]) == k["count"]
            assert page.locator(f"{lane} path.density").count() >= 1
        else:
            assert page.locator(f"{lane} rect.mark").count() == k["count"] == len(rec["marks"])
    assert any(k["count"] > 60 for k in rep["event_kinds"])
    assert requests == [html.as_uri()]
    ctx.close()


def test_without_scripting_narrow_and_printed(browser, bgl_run):
    rep, html = bgl_run
    ctx, page, _ = _open(browser, html, java_script_enabled=False,
                         viewport={"width": 380, "height": 800})
    assert page.locator(".lane").count() == _lanes(rep)
    _bar_adds_up(page, rep["corpus"]["lines"])
    first = rep["findings"][0]["source"]
    assert f"{first['path']}:{first['line_start']}" in page.inner_text("body")
    # narrow: nothing wider than the window but what scrolls on purpose (tables, code)
    over = page.evaluate("document.documentElement.scrollWidth")
    assert over <= 380 + 2, over
    ctx.close()
    ctx, page, _ = _open(browser, html)
    pdf = page.pdf(format="A4")
    import re

    pages = len(re.findall(rb"/Type\s*/Page(?!s)", pdf))
    assert pdf.startswith(b"%PDF") and pages >= 2, pages  # the long page runs over A4 pages
    ctx.close()


def test_copy_on_click_and_colour_is_not_alone(browser, bgl_run):
    rep, html = bgl_run
    ctx, page, _ = _open(browser, html)
    ctx.grant_permissions(["clipboard-read", "clipboard-write"])
    ref = page.locator("code.ref").first
    ref.click()
    assert page.evaluate("navigator.clipboard.readText()") == ref.inner_text()
    # every state drawn in the bar has a text label and a pattern in the legend
    states = set(page.eval_on_selector_all("svg.bar rect.seg", "rs => rs.map(r => r.dataset.state)"))
    legend = page.inner_text(".legend")
    for s in states:
        assert page.locator(f'.legend [data-state="{s}"] rect[fill="url(#pat-{s})"]').count() == 1
    assert "scanned by code" in legend
    ctx.close()


def test_audit_and_mine_pages(browser, tmp_path):
    repo = tmp_path / "repo"
    assert rlm("fixture", "repo", str(repo)).returncode == 0
    audit = tmp_path / "audit.html"
    r = rlm("audit", str(repo), "--model", "none", "--json", "--html", str(audit))
    assert r.returncode in (0, 3), r.stderr
    rep = json.loads(r.stdout)
    ctx, page, requests = _open(browser, audit)
    assert page.locator("#modules table tbody tr").count() == len(rep["audit"]["modules"])
    assert page.locator("#risks").count() == 1
    # the module graph (rlm.codeview) drawn between the map's folders, importers above
    boxes = page.eval_on_selector_all("svg.graph g.node", "gs => gs.map(g => [g.dataset.name, "
                                      "g.getBoundingClientRect().top])")
    top = dict(boxes)
    assert len(top) >= 2 and set(top) <= {m["name"] for m in rep["audit"]["modules"]}
    edges = page.eval_on_selector_all("svg.graph path.edge", "ls => ls.map(l => [l.dataset.from, "
                                      "l.dataset.to, l.getAttribute('stroke-dasharray')])")
    assert edges and all(top[a] < top[b] for a, b, dash in edges if not dash)
    # every edge, as the browser draws it, stays out of every box but its own two
    through = page.evaluate("""() => {
      const boxes = [...document.querySelectorAll('svg.graph g.node')].map(g => {
        const b = g.querySelector('rect').getBBox();
        return {name: g.dataset.name, b}; });
      const hits = [];
      for (const p of document.querySelectorAll('svg.graph path.edge')) {
        const n = p.getTotalLength();
        for (let i = 0; i <= 200; i++) {
          const pt = p.getPointAtLength(n * i / 200);
          for (const {name, b} of boxes) {
            if (name === p.dataset.from || name === p.dataset.to) continue;
            if (pt.x > b.x + 0.5 && pt.x < b.x + b.width - 0.5 && pt.y > b.y + 0.5
                && pt.y < b.y + b.height - 0.5) hits.push([p.dataset.from, p.dataset.to, name]);
          } } }
      return hits; }""")
    assert through == []
    _bytes_bar_adds_up(page, rep["files"])
    big = max(rep["files"]["sizes"], key=rep["files"]["sizes"].get)  # hover: path, size, state
    title = page.eval_on_selector(f'svg.bar rect.seg[data-path="{big}"] title', "t => t.textContent")
    assert title.startswith(f"{big} — {rep['files']['sizes'][big]:,} bytes") and "scanned by code" in title
    assert requests == [audit.as_uri()]
    ctx.close()
    mine = tmp_path / "mine.html"
    r = rlm("mine", str(repo), "how are passwords stored?", "--model", "none", "--json",
            "--html", str(mine))
    assert r.returncode in (0, 3), r.stderr
    rep = json.loads(r.stdout)
    ctx, page, _ = _open(browser, mine)
    q = rep["questions"][0]
    rows = page.locator("#q1 table tbody tr").count()
    assert rows == len(q["verified"]) + len(q["inferred"]) + len(q["rejected"]) + (
        1 if q["placeholder"] else 0)
    for f in q["verified"]:
        assert f["evidence_path"] in page.inner_text("#q1")
    _bytes_bar_adds_up(page, rep["files"])
    ctx.close()
