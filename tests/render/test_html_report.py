"""The HTML report without a browser: runs recorded before it existed render through
`rlm show RUN --html`, bad paths are one-line errors, and the dependency graph's layers put
every importer above what it imports. (tests/test_html_browser.py looks at the pages.)"""

from __future__ import annotations

import html as html_lib
import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from rlm.render.html import report_html
from rlm.render.html.graph import graph_svg, layers

OLD = Path(__file__).resolve().parents[1] / "data" / "reports_v1"


def rlm(*args):
    return subprocess.run([sys.executable, "-m", "rlm.cli", *args], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


class _Segments(HTMLParser):
    """The coverage bar's segments and the page's text."""

    def __init__(self):
        super().__init__()
        self.bars: list[dict] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg" and "bar" in (a.get("class") or "").split():
            self.bars.append({"unit": a.get("data-unit"), "total": a.get("data-total"), "segs": []})
        if tag == "rect" and a.get("class") == "seg" and self.bars:
            self.bars[-1]["segs"].append(a)

    def handle_data(self, data):
        self.text.append(data)


def _parse(page: str) -> _Segments:
    p = _Segments()
    p.feed(page)
    return p


def _record(rep: dict) -> str:
    """Put a report into the run records as `rlm` writes it (rlm.store.runs.Recorder.close)."""
    from rlm.store import RunStore
    import orjson


    s = RunStore()
    rid = rep["run_id"]
    s.start(rid, command=rep["command"], argv=[], options={"command": rep["command"]},
            corpus=rep["corpus"]["path"], question=rep["question"], secrets=[])
    s.execute("UPDATE runs SET status = 'done', report = ? WHERE id = ?", (orjson.dumps(rep).decode(), rid))
    s.close()
    return rid


@pytest.mark.parametrize("name", ["ask", "fanout", "audit", "mine"])
def test_a_run_recorded_before_the_html_report_renders(name, tmp_path):
    rep = json.loads((OLD / f"{name}.json").read_text("utf-8"))
    assert "map" not in rep["coverage"] and "read_files" not in rep.get("files", {})
    rid = _record(rep)
    out = tmp_path / "page.html"
    r = rlm("show", rid, "--html", str(out))
    assert r.returncode == 0, r.stderr
    page = out.read_text("utf-8")
    p = _parse(page)
    bar = p.bars[0]
    unit = bar["unit"]
    total = rep["corpus"]["lines"] if unit == "lines" else rep["files"]["total"]
    assert int(bar["total"]) == total
    assert sum(int(s[f"data-{unit}"]) for s in bar["segs"]) == total
    # the widths fill the bar (each is written to 3 decimals)
    assert abs(sum(float(s["width"]) for s in bar["segs"]) - 1000) <= 0.0005 * len(bar["segs"])
    text = "".join(p.text)
    assert rep["coverage"]["statement"] in text
    for f in rep["findings"]:
        if f.get("status") != "rejected":
            assert f"{f['source']['path']}:{f['source']['line_start']}" in text
    if name in ("ask", "fanout"):
        assert "recorded before rlm kept where things happened" in text
    if name == "fanout":  # 646 lines read, the 12 chunks not run are failed lines
        states = {s["data-state"]: int(s["data-lines"]) for s in bar["segs"]}
        assert states == {"read": 646, "failed": 2354}
    if name == "mine":
        for q in rep["questions"]:
            for f in q["verified"] + q["inferred"]:
                assert f["evidence_path"].split(":")[0] in text


def test_a_profile_run_recorded_before_the_lanes_draws_its_examples(tmp_path):
    """A run from before the report kept where every line of a kind falls (no `timeline`):
    one lane per event kind from its example lines, and the page says that is all it has."""
    rep = json.loads((OLD / "ask_kinds.json").read_text("utf-8"))
    assert "timeline" not in rep and rep["event_kinds"]
    out = tmp_path / "page.html"
    r = rlm("show", _record(rep), "--html", str(out))
    assert r.returncode == 0, r.stderr
    page = out.read_text("utf-8")
    assert page.count('class="lane"') == len(rep["event_kinds"])
    assert "each lane shows only the kind's example lines" in html_lib.unescape(page)
    marks = page.count('class="mark"')
    assert marks == sum(len(k["examples"]) for k in rep["event_kinds"])


def test_a_lanes_record_it_cannot_read_falls_back_to_the_examples():
    """A newer version's record, or a garbled one, is not drawn as if it were understood: the
    lanes come from the examples, and the page says so."""
    rep = json.loads((OLD / "ask_kinds.json").read_text("utf-8"))
    kid = str(rep["event_kinds"][0]["id"])
    for tl in ({"version": 2, "kinds": {kid: {"marks": [[1, None]]}}},
               {"version": 1, "lines": 100, "kinds": {kid: {"line_bins": ["x"] * 200}}}):
        page = html_lib.unescape(report_html({**rep, "timeline": tl}))
        assert page.count('class="lane"') == len(rep["event_kinds"])
        assert "This version cannot read this run's record of where every line of a kind " \
            "falls: each lane shows only the kind's example lines" in page


def test_html_errors_are_one_line(tmp_path):
    log = tmp_path / "a.log"
    log.write_text("2024-01-01 10:00:00 ERROR disk full\n")
    r = rlm("ask", str(log), "errors?", "--model", "none", "--html", str(tmp_path / "no" / "x.html"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and "cannot write" in r.stderr
    r = rlm("show", "nosuchrun", "--html", str(tmp_path / "x.html"))
    assert r.returncode == 2 and "Traceback" not in r.stderr and not (tmp_path / "x.html").exists()


def test_ask_html_places_what_was_read(tmp_path, fake_server):
    """A fan-out with a call that fails: the page's bar has the failed chunk's lines where they
    are, with the reason on hover, and the rest read by the model."""
    p = tmp_path / "notes.txt"
    p.write_text("".join(f"Paragraph {i}: the committee discussed item {i % 7} at length.\n"
                         for i in range(2000)))
    fake_server.fault("Paragraph 1500", "500")  # every try of that chunk fails
    out = tmp_path / "page.html"
    r = rlm("ask", str(p), "what did the committee decide?", "--base-url", fake_server.url,
            "--model", "m", "--strategy", "fanout", "--html", str(out), "--json")
    assert r.returncode == 3, r.stderr
    rep = json.loads(r.stdout)
    [failed] = {(c["line_start"], c["line_end"]) for c in rep["coverage"]["chunks_failed"]}
    bar = _parse(out.read_text("utf-8")).bars[0]
    segs = [(s["data-state"], int(s["data-lines"])) for s in bar["segs"]]
    assert ("failed", failed[1] - failed[0] + 1) in segs
    assert {s for s, _ in segs} == {"read", "failed"}
    assert sum(k for _, k in segs) == 2000
    fs = [s for s in bar["segs"] if s["data-state"] == "failed"]
    assert f"notes.txt:{failed[0]}-{failed[1]}" in html_lib.unescape(out.read_text("utf-8"))
    assert fs and "failed" in out.read_text("utf-8")


def test_graph_layers_put_importers_above():
    edges = [("cli", "api"), ("api", "engine"), ("api", "corpus"), ("engine", "corpus"),
             ("mcp", "api"), ("corpus", "util"), ("engine", "cli")]  # the last closes a cycle
    names = sorted({x for e in edges for x in e})
    rows = layers(names, edges)
    level = {n: i for i, r in enumerate(rows) for n in r}
    assert sorted(level) == names
    back = [(a, b) for a, b in edges if level[a] >= level[b]]
    cycle = {("cli", "api"), ("api", "engine"), ("engine", "cli")}
    assert len(back) == 1 and back[0] in cycle  # one edge of the cycle goes up, no other
    svg = graph_svg({"graph": {"nodes": names, "edges": [list(e) for e in edges]}})
    assert svg.count('class="node"') == len(names) and svg.count('class="edge"') == len(edges)
    assert "1 dashed arrow(s) close a cycle" in svg


def test_absent_sections_are_left_out():
    rep = json.loads((OLD / "ask.json").read_text("utf-8"))
    for k in ("groups", "findings", "gate", "usage", "answer"):
        rep.pop(k)
    rep["coverage"] = {"statement": "Coverage: nothing known. Complete."}
    page = report_html(rep)
    assert "Timeline" not in page and "Findings" not in page
    assert "Coverage: nothing known. Complete." in page


def test_module_graph_is_folded_onto_the_module_map():
    """The audit's module graph (rlm.codeview's shape) drawn between the map's folders; test
    modules and imports inside one folder are left out."""
    audit = {"modules": [{"name": n} for n in ("(root)", "shop", "shop/net", "tests")]}
    nodes = [{"id": "app", "path": "app.py"}, {"id": "shop.core", "path": "shop/core.py"},
             {"id": "shop.util", "path": "shop/util.py"},
             {"id": "shop.net.http", "path": "shop/net/http.py"},
             {"id": "tests.test_core", "path": "tests/test_core.py", "is_test": True}]
    edges = [("app", "shop.core"), ("shop.core", "shop.util"), ("shop.core", "shop.net.http"),
             ("shop.net.http", "shop.util"), ("tests.test_core", "shop.core")]
    views = {"nodes": nodes, "edges": [{"source": a, "target": b, "line": 1, "kind": "module"}
                                       for a, b in edges]}
    svg = graph_svg(audit, views)
    drawn = {(e.split('data-from="')[1].split('"')[0], e.split('data-to="')[1].split('"')[0])
             for e in svg.split('<path class="edge"')[1:]}
    assert drawn == {("(root)", "shop"), ("shop", "shop/net"), ("shop/net", "shop")}
    assert 'data-name="tests"' not in svg
    assert "dashed arrow(s) close a cycle" in svg  # shop <-> shop/net


def test_time_window_outside_is_drawn(tmp_path):
    """A window question: the lines outside the window are their own state in the bar, placed
    where they are, and they are the ones the statement says were left out."""
    log = tmp_path / "app.log"
    log.write_text("".join(f"2024-05-01 {8 + i // 60:02d}:{i % 60:02d}:00 INFO job {i} ok\n"
                           for i in range(300)))  # 08:00 .. 12:59, one line a minute
    out = tmp_path / "w.html"
    r = rlm("ask", str(log), "what happened between 10:00 and 10:59?", "--model", "none",
            "--json", "--html", str(out))
    assert r.returncode in (0, 3), r.stderr
    rep = json.loads(r.stdout)
    segs = [(s["data-state"], int(s["data-lines"]))
            for s in _parse(out.read_text("utf-8")).bars[0]["segs"]]
    assert segs == [("outside", 120), ("scanned", 60), ("outside", 120)]
    assert "the other 240 lines, outside the window" in rep["coverage"]["statement"]


def test_a_log_without_times_is_drawn_on_line_numbers(tmp_path):
    log = tmp_path / "plain.log"
    log.write_text("".join("ERROR worker crashed: out of memory\n" if i in (70, 1400) else
                           f"INFO worker {i % 9} finished task {i}\n" for i in range(2000)))
    out = tmp_path / "p.html"
    r = rlm("ask", str(log), "anomalies?", "--model", "none", "--json", "--html", str(out))
    assert r.returncode in (0, 3), r.stderr
    rep = json.loads(r.stdout)
    page = out.read_text("utf-8")
    assert 'data-axis="line"' in page and "This log has no readable times: the axis is the " \
        "line number." in page
    kinds = [k for k in rep.get("event_kinds") or [] if k.get("examples")]
    assert page.count('class="lane"') == (len(kinds) or len(rep["groups"])) >= 1
    # the error lines' marks sit at their place on the line axis (x in 0..1000)
    xs = sorted(float(m.split('x="')[1].split('"')[0]) + 1
                for m in page.split('class="mark"')[1:] if 'x="' in m.split(">")[0])
    assert any(abs(x - 70 / 1999 * 1000) < 1.5 for x in xs), xs
    assert any(abs(x - 1400 / 1999 * 1000) < 1.5 for x in xs), xs


def test_a_search_answer_stands_on_the_whole_clock_of_its_log(tmp_path):
    """Two error lines at 10:30 and 10:31 of a log written from 10:00 to 11:59: their marks sit
    a quarter of the way along (the log's first to last time), not at the two ends of an axis
    that spans only them."""
    import re

    log = tmp_path / "app.log"
    log.write_text("".join(f"2024-05-01 {10 + i // 60:02d}:{i % 60:02d}:00 "
                           + ("ERROR payment gateway timeout\n" if i in (30, 31) else
                              f"INFO job {i} ok\n") for i in range(120)))
    out = tmp_path / "g.html"
    r = rlm("ask", str(log), 'show every line with "payment gateway"', "--model", "none",
            "--json", "--html", str(out))
    assert r.returncode in (0, 3), r.stderr
    rep = json.loads(r.stdout)
    assert rep["timeline"]["time"]["first_seen"] == "2024-05-01 10:00:00"
    assert rep["timeline"]["time"]["last_seen"] == "2024-05-01 11:59:00"
    page = html_lib.unescape(out.read_text("utf-8"))
    assert "from 2024-05-01 10:00:00 to 2024-05-01 11:59:00" in page
    timeline = page[page.index('id="timeline"'):]
    xs = sorted(float(x) + 1 for x in re.findall(r'class="mark" x="([\d.]+)"', timeline))
    assert len(xs) == 2 and all(abs(x - k / 119 * 1000) < 0.1 for x, k in zip(xs, (30, 31))), xs


def test_a_folder_of_logs_on_clocks_that_do_not_meet(tmp_path):
    """BGL writes years, OpenSSH (syslog) does not: no shared clock, so the axis is the line
    number, files one after another, named in the axis labels."""
    import shutil

    d = tmp_path / "logs"
    d.mkdir()
    for name in ("BGL_head.log", "OpenSSH_head.log"):
        shutil.copy(Path(__file__).resolve().parents[2] / "evals" / "data" / "loghub" / name, d / name)
    out = tmp_path / "f.html"
    r = rlm("ask", str(d), "anomalies?", "--model", "none", "--html", str(out))
    assert r.returncode in (0, 3), r.stderr
    page = out.read_text("utf-8")
    assert 'data-axis="line"' in page and "share no clock" in page
    assert "BGL_head.log:1<" in page and "OpenSSH_head.log:" in page
    bar = _parse(page).bars[0]
    assert sum(int(s["data-lines"]) for s in bar["segs"]) == int(bar["total"]) == 199


def test_every_link_on_a_log_page_lands_somewhere(tmp_path):
    """Lanes link to their event kinds, the answer's path:line (the event-kind table's examples) to
    the findings: every in-page link has its target."""
    import re

    out = tmp_path / "bgl.html"
    r = rlm("ask", str(Path(__file__).resolve().parents[2] / "evals" / "data" / "loghub" / "BGL_2k.log"),
            "anomalies?", "--model", "none", "--html", str(out))
    assert r.returncode in (0, 3), r.stderr
    page = out.read_text("utf-8")
    targets = set(re.findall(r'href="#([^"]+)"', page))
    ids = set(re.findall(r'id="([^"]+)"', page))
    assert targets and targets <= ids, sorted(targets - ids)[:5]
    # lanes -> the report's event kinds (a profile run carries them since issue 19), each
    # drawn with its example lines
    assert any(t.startswith("kind-") for t in targets)
    assert any(t.startswith("f-") for t in targets)  # the kinds table's examples -> findings


def test_redact_report_masks_the_page_too(tmp_path):
    log = tmp_path / "sec.log"
    log.write_text("2024-01-01 10:00:00 ERROR login failed password=Hunter2SuperSecret99 for "
                   "bob@example.com\n2024-01-01 10:00:01 INFO ok\n")
    out = tmp_path / "s.html"
    r = rlm("ask", str(log), "errors?", "--model", "none", "--redact-report", "--html", str(out))
    assert r.returncode in (0, 3), r.stderr
    page = out.read_text("utf-8")
    assert "login failed" in page  # the line is there, its secrets are not
    assert "Hunter2SuperSecret99" not in page and "bob@example.com" not in page


def test_an_event_kind_group_keeps_its_exact_count():
    """logs-answers' event-kind groups (kind "event", count, severity) carry 3 example lines
    of 60: the lane and the group say 60, and that 3 are drawn and cited."""
    lines = [104, 105, 106]
    rep = {"command": "ask", "question": "anomalies?",
           "corpus": {"path": "BGL.log", "lines": 2000, "kind": "log"},
           "groups": [{"id": "k1", "kind": "event", "key": "data TLB error interrupt",
                       "why": "FATAL, 60 lines", "lines": lines, "paths": ["BGL.log"] * 3,
                       "count": 60, "severity": "FATAL"}],
           "findings": [{"id": f"e{i}", "claim": "FATAL event kind", "verified": True,
                         "group": "k1", "evidence": f"- 1118536327 2005.06.11 R30 RAS KERNEL "
                         f"FATAL data TLB error interrupt {ln}",
                         "source": {"path": "BGL.log", "line_start": ln, "line_end": ln}}
                        for i, ln in enumerate(lines, 1)],
           "coverage": {"statement": "Complete."}}
    page = report_html(rep)
    assert "60 lines (3 drawn)" in page and "60 lines (3 cited below)" in page
    assert page.count('class="lane"') == 1 and ">FATAL</span>" in page


def test_every_counted_line_is_on_the_strip():
    """A counting answer's matched.lines (path -> runs): the strip's slices hold every line,
    each where it is on the line axis."""
    import re

    runs = {"a.log": [[1, 10], [500, 500], [990, 1000]]}
    rep = {"command": "ask", "question": "how many failed?", "corpus": {"path": "a.log",
           "lines": 1000, "kind": "log"}, "matched": {"lines": runs}, "coverage": {}}
    page = report_html(rep)
    slices = re.findall(r'class="density" x="([\d.]+)"[^>]*><title>([\d,]+) lines?', page)
    assert sum(int(n.replace(",", "")) for _, n in slices) == 22
    xs = {float(x) for x, _ in slices}
    assert xs == {0.0, 5.0, 495.0, 985.0, 990.0, 995.0}  # 200 slices of 5 lines


def test_a_log_page_draws_the_event_kinds_once_with_how_many_are_shown(tmp_path):
    """The answer's Markdown table of kinds and its "12 of N kinds shown" are not drawn again
    above the "Event kinds" section: one table, whose caption says how many it shows."""
    import re

    out = tmp_path / "bgl.html"
    r = rlm("ask", str(Path(__file__).resolve().parents[2] / "evals" / "data" / "loghub" / "BGL_2k.log"),
            "anomalies?", "--model", "none", "--html", str(out), "--json")
    assert r.returncode in (0, 3), r.stderr
    rep = json.loads(r.stdout)
    assert "Event kinds picked by code, ranked (" in rep["answer"]  # the Markdown answer has it
    page = out.read_text("utf-8")
    kinds = [k for k in rep["event_kinds"] if k.get("examples")]
    assert "Event kinds picked by code" not in page and "kinds shown with" not in page
    m = re.search(r"<strong>([\d,]+) of ([\d,]+) kinds shown</strong>", page)
    assert m and int(m.group(2).replace(",", "")) == len(kinds)
    section = page[page.index('<section id="kinds">'):]
    section = section[: section.index("</section>")]
    drawn = section.count('<a href="#kind-')
    assert drawn == int(m.group(1).replace(",", "")) == min(len(kinds), 100)
    answer = page[page.index('<section id="answer">'):]
    answer = answer[: answer.index("</section>")]
    assert "<table" not in answer  # the kinds table is not drawn in the answer as well
