"""`rlm calibrate` against the fake server: a scripted model that is right only below a fill level."""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET

import anyio
import pytest
from typer.testing import CliRunner

from rlm.testing import prompt_text
from rlm import calibrate as cal
from rlm.api import AskOptions, ask_async
from rlm.cli import app
from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache
from rlm.calibrate.plot import _Frame as Frame

SVG = "{http://www.w3.org/2000/svg}"

CONTEXT = 8000
LEVELS = [0.2, 0.4, 0.6, 0.8]  # 1,600 / 3,200 / 4,800 / 6,400 prompt tokens
NEEDLE_LIMIT = 4000  # right below this many prompt tokens -> breakpoint 0.6 (4,800 > 4,000)
SYNTH_LIMIT = 2000  # -> breakpoint 0.2 (1,600 tokens) -> usable window 1,280


def scripted(needle_limit: int = NEEDLE_LIMIT, synth_limit: int = SYNTH_LIMIT):
    """Answers from the planted facts while the prompt is small enough, else gives up."""

    def fn(req, text):
        tokens = math.ceil(len(prompt_text(req)) / 4)  # what OpenAICompatModel counts
        if "door code" in text:
            if tokens > needle_limit:
                return {"answer": "I could not find it."}
            m = re.search(r"door code for the \w+ storage room is (\d+)", text)
            return {"answer": f"The code is {m.group(1)}."}
        if tokens > synth_limit:
            return {"answer": "It is held in Paris."}
        city = re.search(r"offsite will be held in (\w+)", text).group(1)
        rooms = re.search(r"we booked (\d+) hotel rooms", text).group(1)
        date = re.search(r"offsite starts on (\w+ \d+)", text).group(1)
        return {"answer": f"In {city}, {rooms} rooms, starting {date}."}

    return fn


def model_for(server, name: str = "fake") -> OpenAICompatModel:
    reset_mode_cache()
    return OpenAICompatModel(name, server.url, context_tokens=CONTEXT, timeout=5.0, max_attempts=2,
                             backoff_base=0.01)


def test_prompts_fill_to_their_level_and_hold_the_facts():
    class Counter:  # 4 chars per token, like the HTTP model
        name, context_tokens = "counter", CONTEXT

        def count_tokens(self, text):
            return math.ceil(len(text) / 4)

    for task in ("needle", "synthesis"):
        for level, tok in cal.levels_tokens(CONTEXT, LEVELS):
            tr = cal.build_trial(Counter(), task, level, 1, 3, tok)
            assert 0.9 * tok <= tr.prompt_tokens <= tok
            body = tr.messages[-1]["content"]
            assert body.startswith("Question: ") and all(f in body for f in tr.facts)
            assert len(tr.facts) == (1 if task == "needle" else 3)
            assert cal.score_answer(" and ".join(tr.expected), tr.expected)
    assert not cal.score_answer("rooms: 140", ["14"]) and cal.score_answer("1,400 rooms", ["1400"])


def test_calibrate_writes_profile_with_breakpoints(fake_server, tmp_path):
    fake_server.on("CalibAnswer", scripted())
    prof = cal.calibrate(model_for(fake_server), LEVELS, reps=2, timeout=5.0, concurrency=4)
    assert len(fake_server.requests) == len(LEVELS) * 2 * 2
    by_level = {r["level"]: r for r in prof["curve"]}
    assert [by_level[lv]["needle"] for lv in LEVELS] == [1.0, 1.0, 0.0, 0.0]
    assert [by_level[lv]["synthesis"] for lv in LEVELS] == [1.0, 0.0, 0.0, 0.0]
    assert prof["needle_breakpoint"]["level"] == 0.4 and prof["needle_breakpoint"]["tokens"] == 3200
    assert prof["synthesis_breakpoint"]["level"] == 0.2
    assert prof["usable_window_tokens"] == int(0.8 * 1600)
    path = tmp_path / "_rlm_config" / "profiles" / "fake.json"  # RLM_CONFIG_DIR (conftest)
    assert prof["_path"] == str(path)
    saved = json.loads(path.read_text())
    assert saved["usable_window_tokens"] == 1280 and cal.load_profile("fake")["model"] == "fake"


def test_breakpoint_stops_at_the_first_level_below_threshold():
    curve = [{"level": 0.1, "tokens": 1, "x": 1.0}, {"level": 0.3, "tokens": 3, "x": 0.5},
             {"level": 0.5, "tokens": 5, "x": 1.0}]
    assert cal.breakpoint(curve, "x")["level"] == 0.1
    assert cal.breakpoint([{"level": 0.1, "tokens": 1, "x": 0.0}], "x") is None


def test_gate_and_chunker_use_the_profile(fake_server, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("".join(f"Note {i}: the team met and talked about routine matters.\n"
                             for i in range(1, 181)))
    ask = lambda: anyio.run(lambda: ask_async(str(notes), "what was discussed?",  # noqa: E731
                                              AskOptions(dry_run=True), model=model_for(fake_server)))
    before = ask()
    assert before.strategy == "direct"
    assert not any("calibrated" in r for r in before.gate.reasons)

    fake_server.on("CalibAnswer", scripted())
    cal.calibrate(model_for(fake_server), LEVELS, reps=1, timeout=5.0, concurrency=4)
    after = ask()
    reason = after.gate.reasons[0]
    assert "calibrated profile" in reason and "1,280" in reason
    assert after.strategy == "fanout"  # ~3,000 tokens no longer fit the calibrated window
    from rlm.engine.window import PROMPT_OVERHEAD_TOKENS

    want = f"chunks of at most ~{1280 - PROMPT_OVERHEAD_TOKENS:,} tokens"  # calibrated - overhead
    assert any(want in r for r in after.gate.reasons), after.gate.reasons


def test_profile_without_usable_window_keeps_default_and_says_so(fake_server, tmp_path):
    fake_server.on("CalibAnswer", scripted(needle_limit=0, synth_limit=0))
    prof = cal.calibrate(model_for(fake_server), [0.2, 0.4], reps=1, timeout=5.0)
    assert prof["synthesis_breakpoint"] is None and prof["usable_window_tokens"] is None
    win, note = cal.profile_window("fake", CONTEXT)
    assert win is None and "never reached 90%" in note


def test_cli_calibrate_prints_table_and_plots(fake_server, tmp_path, monkeypatch):
    fake_server.on("CalibAnswer", scripted())
    reset_mode_cache()
    svg = tmp_path / "curve.svg"
    # the CLI builds its own model: context comes from the registry default (8,192)
    r = CliRunner().invoke(app, ["calibrate", "--model", "fake", "--base-url", fake_server.url,
                                 "--levels", "0.2,0.4,0.6,0.8", "--reps", "1", "--plot", str(svg),
                                 "--timeout", "5"])
    assert r.exit_code == 0, r.output
    assert "| fill | prompt tokens | needle | synthesis |" in r.output
    assert "needle breakpoint: 40%" in r.output and "synthesis breakpoint: 20%" in r.output
    assert "profile written to" in r.output
    assert f"plot written to {svg}" in r.output
    root = ET.parse(svg).getroot()
    assert root.tag == SVG + "svg"
    series = {g.get("data-name"): g for g in root.iter(SVG + "g") if g.get("class") == "series"}
    assert set(series) == {"needle", "synthesis"}
    # the curve read back from the picture: y pixel -> accuracy, in the plot's own frame
    f = Frame((720, 440), (0, 100), (0, 100))
    for name, want in (("needle", [100, 100, 0, 0]), ("synthesis", [100, 0, 0, 0])):
        pts = [tuple(map(float, p.split(","))) for p in
               series[name].find(SVG + "polyline").get("points").split()]
        assert [p[0] for p in pts] == [f.x(x) for x in (20, 40, 60, 80)]
        assert [p[1] for p in pts] == [f.y(y) for y in want]
    texts = [t.text for t in root.iter(SVG + "text")]
    assert "accuracy vs fill: fake" in texts and "90% threshold" in texts
    assert root.find(f".//{SVG}line[@class='threshold']").get("y1") == str(f.y(90))
    png = CliRunner().invoke(app, ["calibrate", "--base-url", fake_server.url, "--plot",
                                   str(tmp_path / "c.png")])
    assert png.exit_code == 2 and "ending in .svg" in png.output
    assert not (tmp_path / "c.png").exists()
    bad = CliRunner().invoke(app, ["calibrate", "--base-url", fake_server.url, "--levels", "2"])
    assert bad.exit_code == 2
