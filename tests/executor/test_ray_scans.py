"""The corpus scans beyond the template count, on a real local Ray cluster (one for this
module, 2 CPUs, 127.0.0.1) and on the local executor over the same shards: the count questions
(a level, anchors, every line, the templates a question's words name; grouped by a slot; in a
time window), a time window's profile. Each gives the same answer on both executors, and the
counts are checked against a count written here, line by line over the file."""

from __future__ import annotations

import json
import re

import anyio
import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install 'rlm[ray]'")

from rlm.api import AskOptions, ask_async  # noqa: E402
from rlm.corpus.rarity import rare_candidates  # noqa: E402
from rlm.corpus.source import TextSource  # noqa: E402
from rlm.executor import LocalExecutor, using  # noqa: E402
from rlm.executor.ray_cluster import RayExecutor  # noqa: E402
from rlm.fixtures.log import write_log  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    p = tmp_path_factory.mktemp("scanlog") / "app.log"
    key = write_log(p, lines=60_000, seed=11)  # ~5 MB: 5 shards of 1 MB
    return p, key, p.read_text().splitlines()


def _ask(path, question, executor):
    return anyio.run(lambda: ask_async(str(path), question,
                                       AskOptions(model="none", executor=executor)))


def _both(path, question):
    local, remote = _ask(path, question, "local"), _ask(path, question, "ray")
    assert remote.executor["name"] == "ray"
    assert sum(remote.executor["shards_per_node"].values()) >= 2  # the scan ran as shards
    assert remote.answer == local.answer
    assert [(f.source.line_start, f.claim) for f in remote.findings] == \
        [(f.source.line_start, f.claim) for f in local.findings]
    assert remote.coverage.statement == local.coverage.statement
    assert json.dumps(remote.matched) == json.dumps(local.matched)
    return remote


def _runs(lines: list[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for n in lines:
        if out and out[-1][1] == n - 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return out


@pytest.mark.parametrize("question, rx, by", [
    ("how many warnings per component?", r"^\S+ WARN ", r"\[([\w-]+)\]"),
    ("how many lines per hour?", r"", r"^\d{4}-\d\d-\d\dT(\d\d)"),
])
def test_level_and_every_line_counts_with_groups(cluster, log, monkeypatch, question, rx, by):
    path, _, lines = log
    monkeypatch.setenv("RLM_SHARD_MB", "1")
    rep = _both(path, question)
    want = [n for n, s in enumerate(lines, 1) if re.search(rx, s)]
    m = rep.matched
    assert m["total"] == len(want) and m["lines"][str(path)] == _runs(want)
    groups: dict[str, int] = {}
    for n in want:
        k = re.search(by, lines[n - 1]).group(1)
        groups[k] = groups.get(k, 0) + 1
    assert sorted(g["lines"] for g in m["groups"]) == sorted(groups.values())
    assert rep.coverage.complete


def test_anchor_and_template_counts(cluster, log, monkeypatch):
    path, key, lines = log
    monkeypatch.setenv("RLM_SHARD_MB", "1")
    sess = key["session_id"]
    rep = _both(path, f"how many lines mention {sess}?")
    assert rep.matched["lines"][str(path)] == _runs(
        [n for n, s in enumerate(lines, 1) if sess in s])
    rep = _both(path, "how many overrides were accepted per actor?")
    want = [n for n, s in enumerate(lines, 1) if "override accepted" in s]
    assert rep.matched["total"] == len(want) >= 2 and rep.matched["kinds"]
    actors = {re.search(r"actor=(\S+)", lines[n - 1]).group(1) for n in want}
    assert {g["key"] for g in rep.matched["groups"]} <= actors | {"(none)"}


def test_a_number_in_the_question_counts_the_same_on_both(cluster, log, monkeypatch):
    """`status 200` is a literal (rlm.corpus.literals) checked on every shard's hit lines."""
    path, _, lines = log
    monkeypatch.setenv("RLM_SHARD_MB", "1")
    rep = _both(path, "how many lines with status 200 per component?")
    want = [n for n, s in enumerate(lines, 1) if re.search(r"(?<!\w)status=200\b", s)]
    assert 0 < len(want) < len(lines)
    assert rep.matched["lines"][str(path)] == _runs(want)
    assert "holding `status=200`" in rep.answer


def test_counts_in_a_time_window(cluster, log, monkeypatch):
    path, _, lines = log
    monkeypatch.setenv("RLM_SHARD_MB", "1")
    rep = _both(path, "how many warnings between 2026-03-14 08:30 and 2026-03-14 09:10?")
    inside = re.compile(r"^2026-03-14T(08:[3-5]\d|09:(0\d|10))")
    want = [n for n, s in enumerate(lines, 1) if inside.match(s) and " WARN " in s]
    assert rep.matched["total"] == len(want) > 0
    assert rep.matched["lines"][str(path)] == _runs(want)


def test_a_time_window_profile(cluster, log, monkeypatch):
    path, key, _ = log
    monkeypatch.setenv("RLM_SHARD_MB", "1")
    rep = _both(path, "what happened between 08:00 and 09:00?")
    assert rep.strategy == "profile" and rep.coverage.complete
    panics = [n["line"] for n in key["needles"]
              if n["kind"] == "panic" and n["text"].startswith("2026-03-14T08:")]
    assert panics and {f.source.line_start for f in rep.findings} >= set(panics)


def test_the_rarity_count_adds_up_across_shards(cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("RLM_SHARD_MB", "0.5")
    p = tmp_path / "tickets.log"
    rows = []
    for i in range(60_000):
        if i % 800 == 7:  # 75 lines, ~12 a shard: rare in each shard, common in the file
            rows.append(f"2026-03-14T09:00:00Z INFO the follow-up for ticket {i} was agreed\n")
        elif i in (9_000, 31_000, 52_000):
            rows.append(f"2026-03-14T09:00:00Z WARN keen-jacket ticket {i} was agreed\n")
        else:
            rows.append(f"2026-03-14T09:00:00Z INFO item {i} processed in {i % 97} ms\n")
    p.write_text("".join(rows))
    # the gate's count, with a budget no load here can spend (the gate's own is 2 s)
    with TextSource(p) as src:
        counts = {}
        for name, ex in (("local", LocalExecutor()), ("ray", RayExecutor())):
            with using(ex):
                counts[name] = rare_candidates([src], ["follow-up", "keen-jacket"], 60_000,
                                               budget_s=120)
            assert sum(ex.tasks.values()) >= 5  # the count ran as shards
    assert counts["ray"] == counts["local"]
    common, rare = counts["ray"]
    assert (common.lines, common.finished, common.rare) == (51, False, False)  # limit 50, + 1
    assert (rare.lines, rare.finished, rare.rare) == (3, True, True)
    assert "too common" in common.reason() and "rare, so it is an anchor" in rare.reason()


def test_redaction_scans_on_ray_workers_and_sends_the_local_prompts(cluster, tmp_path,
                                                                    fake_server):
    from tests.redact.test_redact_run import SECRETS, map_quoting_errors, planted_log

    p = tmp_path / "app.log"
    planted_log(p, lines=3000)
    fake_server.on("MapResult", map_quoting_errors)

    def run(executor):
        before = len(fake_server.requests)
        opts = AskOptions(model="m", base_url=fake_server.url, executor=executor, redact=True,
                          strategy="fanout", concurrency=3, no_cache=True)
        rep = anyio.run(lambda: ask_async(str(p), "what failed?", opts))
        return rep, [json.dumps(r["body"]["messages"]) for r in fake_server.requests[before:]]

    local, sent_local = run("local")
    remote, sent_remote = run("ray")
    assert remote.executor["tasks"]["redact"] >= remote.coverage.chunks_total > 1
    assert "redact" not in local.executor["tasks"]
    # the same placeholders in the same prompts, though the scans finished in any order
    assert sorted(sent_remote) == sorted(sent_local)
    for value in SECRETS:
        assert not any(value in body for body in sent_remote), value
    assert remote.redaction == local.redaction and remote.redaction.values >= len(SECRETS)
    assert [(f.source.line_start, f.evidence) for f in remote.findings] == \
        [(f.source.line_start, f.evidence) for f in local.findings]


def test_a_count_shard_that_still_fails_is_named_and_left_out(cluster, log, monkeypatch):
    from tests.executor.test_executor_ray import Killer

    path, _, lines = log
    monkeypatch.setenv("RLM_SHARD_MB", "1")
    monkeypatch.setenv("RLM_RAY_WORKERS", "1")  # one shard at a time: the 2nd kill is the retry
    killer = Killer(times=2)
    killer.start()
    rep = _ask(path, "how many warnings per component?", "ray")
    killer.stop.set()
    assert len(killer.killed) == 2
    failed = rep.coverage.chunks_failed
    assert [c.chunk for c in failed] == ["shard-1"] and not rep.coverage.complete
    assert "not counted: its Ray worker died, twice (retried once)" in failed[0].reason
    assert failed[0].line_start == 1 and failed[0].line_end > 1_000
    assert f"shard-1 {path}:1-{failed[0].line_end}" in rep.coverage.statement
    warn = re.compile(r"^\S+ WARN ")  # the total is the other shards' warnings, line for line
    want = [n for n, s in enumerate(lines, 1) if n > failed[0].line_end and warn.search(s)]
    assert rep.matched["total"] == len(want) and rep.matched["lines"][str(path)] == _runs(want)
