"""Benchmark for the redaction detector (issues 13 and 21): recall per kind, false positives, speed.

1. Recall: each of the 33 planted kinds (tests/planted_secrets.py) in a keyed log line and in
   prose with no keyword near; a value counts as redacted when no piece of it longer than 8
   characters is left (a JWT: its signature). Also for the detector before issue 21 (its source
   taken from git, `--before REV`), when detect-secrets is installed.
2. False positives: every distinct value replaced on the three fixtures (the generators' real
   personal data expected), and the secrets found in the 16 LogHub 2k logs (`--loghub DIR`,
   default ../shared/loghub): block ids, hex ids, UUIDs, paths must survive. IP addresses there
   are personal data and are counted apart. And the SECRET values found in source code nobody
   here wrote (the standard library, installed packages, C headers, Node.js modules), now and
   at `--previous`: names and expressions, but for a test suite's own passwords.
3. Speed: MB/s of `detect` (CPU time of this process, best of 7 rounds in which every contender
   runs once in turn, and wall clock) on the LogHub
   logs and on the log and transcript fixtures, and of a run's Redactor over the same text cut
   into 4 KB, 16 KB and 32 KB prompts (the fixed cost of each call counts there), each redacted
   as it is sent, and as a fan-out now sends them: built a batch ahead and scanned a batch in one
   pass (rlm.engine.ahead, rlm.redact.batch), next to one pass of a single compiled regex
   (`re.findall(r"\\d+")`) over the same text in the same run (the machine's reference), and the
   detectors before on the same text: the one at `--previous REV` (default: session 7's end), whole
   and over 4 KB prompts, and the one before
   issue 21 (`--before REV`, when detect-secrets is installed).

    python -m evals.bench_redact [--lines 20000] [--loghub DIR] [--before REV] [--previous REV]
"""

from __future__ import annotations

import argparse
import collections
import importlib
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from tests.planted_secrets import KINDS, keyed_line, leaked, prose_line  # noqa: E402

from rlm.fixtures.log import write_log  # noqa: E402
from rlm.fixtures.repo import write_repo  # noqa: E402
from rlm.fixtures.transcript import write_transcript  # noqa: E402
from rlm.redact.detect import detect  # noqa: E402
from rlm.redact.redactor import Redactor  # noqa: E402

EXPECTED_PII = {("IP", "198.51.100.173"), ("EMAIL", "security@parcelpost.invalid")}


def fixture_texts(d: Path, lines: int) -> dict[str, str]:
    write_log(d / "f.log", lines=lines)
    write_transcript(d / "t.txt", lines=lines)
    write_repo(d / "repo")
    repo = d / "repo"
    repo_text = "\n".join(p.relative_to(repo).as_posix() + "\n" + p.read_text("utf-8", "replace")
                          for p in sorted(repo.rglob("*")) if p.is_file() and p.suffix != ".png")
    return {"log": (d / "f.log").read_text(), "transcript": (d / "t.txt").read_text(),
            "repo": repo_text}


def before_module(rev: str):
    """The detector as it was at `rev` (rlm/redact/detect.py before the layout moved it), imported on
    its own (None without detect-secrets)."""
    try:
        src = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:rlm/redact/detect.py"],
                             capture_output=True, text=True, check=True).stdout
        import detect_secrets  # noqa: F401
    except (subprocess.CalledProcessError, ImportError):
        return None
    path = Path(tempfile.mkdtemp()) / "redact_before.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("redact_before", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["redact_before"] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def recall(redactor_cls) -> dict[str, tuple[bool, bool]]:
    """kind -> (keyed redacted, prose redacted)."""
    return {k: (not leaked(k, redactor_cls().redact(keyed_line(k))),
                not leaked(k, redactor_cls().redact(prose_line(k)))) for k in KINDS}


def print_recall(now: dict, before: dict | None) -> None:
    print("\n1. recall per kind (keyed line / prose); before issue 21 in brackets")
    for k, (kk, pp) in now.items():
        b = before.get(k) if before else None
        was = f"  [{'ok' if b[0] else 'LEAK'} / {'ok' if b[1] else 'LEAK'}]" if b else ""
        print(f"   {k:18s} {'ok' if kk else 'LEAK':4s} / {'ok' if pp else 'LEAK':4s}{was}")
    for name, r in (("now", now), ("before", before)):
        if r:
            print(f"   {name}: keyed {sum(a for a, _ in r.values())}/{len(r)}, "
                  f"prose {sum(b for _, b in r.values())}/{len(r)}")


def loghub_texts(d: Path) -> dict[str, str]:
    return {p.name: p.read_text("utf-8", "replace") for p in sorted(d.glob("*_2k.log"))}


def false_positives(texts: dict[str, str], logs: dict[str, str]) -> None:
    print("\n2. false positives")
    for name, text in texts.items():
        found = {(h.kind, h.value) for h in detect(text)}
        fps = sorted(found - EXPECTED_PII)
        print(f"   fixture {name:10s} {len(text) / 1e6:5.2f} MB: {len(found)} distinct values "
              f"replaced, {len(fps)} false positives {fps[:4]}")
    secrets = collections.Counter()
    kinds = collections.Counter()
    for name, text in logs.items():
        for h in detect(text):
            kinds[h.kind] += 1
            if h.kind != "IP":
                secrets[(name, h.kind, h.value)] += 1
    tokens = sum(len(t.split()) for t in logs.values())
    print(f"   LogHub ({len(logs)} logs, {tokens:,} tokens): {len(secrets)} distinct non-IP values "
          f"replaced {sorted(secrets)[:6]}; kinds {dict(kinds)}")


def code_texts(limit: int = 6_000_000) -> dict[str, str]:
    """Source code nobody here wrote: this interpreter's standard library, the packages
    installed beside rlm, C headers and Node.js modules (what the machine has of them), up to
    `limit` characters each, files in name order."""
    import sysconfig

    roots = {"Python stdlib": (Path(sysconfig.get_paths()["stdlib"]), "*.py"),
             "installed packages (.py)": (Path(sysconfig.get_paths()["purelib"]), "*.py"),
             "C headers (/usr/include)": (Path("/usr/include"), "*.h"),
             "Node.js modules (.js)": (Path("/usr/lib/node_modules"), "*.js")}
    out = {}
    for name, (root, glob) in roots.items():
        parts, n = [], 0
        for p in sorted(root.rglob(glob)) if root.is_dir() else ():
            if "rlm" in p.relative_to(root).parts[:1] or n > limit:
                continue
            try:
                t = p.read_text("utf-8", "replace")[:1_000_000]
            except OSError:
                continue
            parts.append(t)
            n += len(t)
        if parts:
            out[name] = "".join(parts)
    return out


def code_false_positives(previous) -> None:
    """Secrets found in source code are names and expressions, not secrets (a key=value's
    `password = creds.password`, a C header's glProgramUniformMatrix2x3fvEXT): distinct values
    and hits (each value is then taken wherever it recurs), now and at --previous."""
    print("\n2b. SECRET values in source code (names, expressions, and test suites' own passwords)")
    for name, text in code_texts().items():
        line = f"   {name:26s} {len(text) / 1e6:4.1f} MB:"
        for label, fn in (("now", detect), ("previous", getattr(previous, "detect", None))):
            if fn is None:
                continue
            hits = [h for h in fn(text) if h.kind == "SECRET"]
            values = collections.Counter(h.value for h in hits)
            line += (f" {label} {len(values)} distinct, {len(hits)} hits "
                     f"{[v[:30] for v, _ in values.most_common(3)]};")
        print(line, flush=True)


def previous_module(rev: str):
    """The detector as it was at `rev` (every module of rlm/redact/ then), imported as a package
    of its own; None when git does not have it."""
    try:
        names = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "--name-only", f"{rev}:rlm/redact/"],
                               capture_output=True, text=True, check=True).stdout.split()
    except subprocess.CalledProcessError:
        return None
    pkg = Path(tempfile.mkdtemp()) / "redact_previous"
    pkg.mkdir()
    for name in names:
        if not name.endswith(".py"):
            continue
        src = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:rlm/redact/{name}"],
                             capture_output=True, text=True, check=True).stdout
        src = src.replace("from rlm.redact.", "from redact_previous.").replace(
            "from rlm.redact import", "from redact_previous import")
        (pkg / name).write_text(src)
    (pkg / "__init__.py").touch()
    spec = importlib.util.spec_from_file_location("redact_previous", pkg / "__init__.py",
                                                  submodule_search_locations=[str(pkg)])
    sys.modules["redact_previous"] = importlib.util.module_from_spec(spec)
    mod = importlib.import_module("redact_previous.detect")
    if not hasattr(mod, "Redactor"):  # from session 4 on it has a module of its own
        mod.Redactor = importlib.import_module("redact_previous.redactor").Redactor
    return mod


RUNS = 7  # rounds; each times every contender once, in turn, and keeps its best


def _interleaved(fns: dict, text: str, runs: int = RUNS) -> dict[str, tuple[float, float]]:
    """name -> (best CPU seconds, best wall seconds) of fn(text). The contenders run in turn,
    round after round, so that the machine's drift (this one's CPU time moves 20-40% between
    minutes) falls on all of them alike; on a loaded machine the CPU time of this process moves
    less than the wall clock."""
    best = {k: (float("inf"), float("inf")) for k in fns}
    for _ in range(runs):
        for k, fn in fns.items():
            c, w = time.process_time(), time.perf_counter()
            fn(text)
            c, w = time.process_time() - c, time.perf_counter() - w
            best[k] = (min(best[k][0], c), min(best[k][1], w))
    return best


def speed(text: str, label: str, before, previous) -> None:
    """MB/s of detect (CPU and wall) next to one `re.findall(r"\\d+")` pass over the same text,
    and to the detectors before, in the same run."""
    mb = len(text.encode()) / 1e6
    chunks = {size: _chunks(text, size) for size in CHUNKS}
    fns = {"detect": detect, "ref": lambda t: re.findall(r"\d+", t)}
    for size, c in chunks.items():
        fns[size] = lambda t, c=c: _redact_run(c)
        fns[f"{size} ahead"] = lambda t, c=c: _redact_fanout(c)
    if previous is not None:
        small = chunks[CHUNKS[0]]
        fns["prev"] = previous.detect
        fns["prev_run"] = lambda t: _redact_run(small, previous.Redactor)
    best = _interleaved(fns, text)
    (det_c, det_w), ref_c = best["detect"], best["ref"][0]
    run_c = {size: best[size][0] for size in CHUNKS}
    ahead_c = {size: best[f"{size} ahead"][0] for size in CHUNKS}
    line = (f"   {label}: {mb:.1f} MB; detect {mb / det_c:.1f} MB/s CPU ({mb / det_w:.1f} wall); "
            f"one regex pass (\\d+) {mb / ref_c:.1f} MB/s CPU; detect takes {det_c / ref_c:.2f}x "
            f"the regex pass; a run's Redactor over prompts of "
            + ", ".join(f"{size // 1000} KB {mb / c:.1f} MB/s ({c / ref_c:.2f}x)"
                        for size, c in run_c.items())
            + "; as a fan-out sends them (built and scanned a batch ahead) "
            + ", ".join(f"{size // 1000} KB {mb / c:.1f} MB/s ({c / ref_c:.2f}x)"
                        for size, c in ahead_c.items()))
    if previous is not None:
        prev_c, prev_r = best["prev"][0], best["prev_run"][0]
        line += (f"; the detector at --previous {mb / prev_c:.1f} MB/s CPU ({prev_c / det_c:.2f}x "
                 f"the time), its Redactor over {CHUNKS[0] // 1000} KB prompts "
                 f"{mb / prev_r:.1f} MB/s ({prev_r / run_c[CHUNKS[0]]:.2f}x the time)")
    if before is not None:
        c = time.process_time()
        before.detect(text)
        old_c = time.process_time() - c
        line += f"; before issue 21 {mb / old_c:.2f} MB/s CPU ({old_c / det_c:.0f}x slower)"
    print(line, flush=True)


CHUNKS = (4_000, 16_000, 32_000)  # prompt sizes: a small model's window, a fan-out's chunk
# with the default 8,192-token context, a common larger one


def _chunks(text: str, size: int) -> list[str]:
    """text cut at line ends into pieces of about `size` characters, as a fan-out cuts it."""
    out, a = [], 0
    while a < len(text):
        b = text.find("\n", a + size)
        b = len(text) if b < 0 else b + 1
        out.append(text[a:b])
        a = b
    return out


def _redact_run(chunks: list[str], redactor_cls=None) -> None:
    """What a run does: one Redactor, each chunk redacted as a prompt (placeholders shared)."""
    r = (redactor_cls or Redactor)()
    for c in chunks:
        r.redact(c, count_prompt=True)


class _Silent:
    """The model a RedactingModel wraps here: nothing is sent, only redacted."""

    name, context_tokens = "bench", 8_192


def _redact_fanout(chunks: list[str]) -> None:
    """What a fan-out does now: its prompts built a batch ahead (rlm.engine.ahead), each batch
    scanned in one pass (RedactingModel.prescan), each prompt redacted as it is sent."""
    from rlm.engine.ahead import Ahead
    from rlm.redact.model import RedactingModel

    model = RedactingModel(_Silent(), Redactor())
    ahead = Ahead(model, lambda i: [{"role": "user", "content": chunks[i]}], key=str)
    for i in ahead.items(range(len(chunks))):
        model.redact_now(ahead.messages(i))


def ip_dense_log(lines: int) -> str:
    """An sshd-like log where every line holds two IPv4 addresses (seeded)."""
    import random

    rnd = random.Random(7)
    out = []
    for i in range(lines):
        a = ".".join(str(rnd.randrange(1, 255)) for _ in range(4))
        b = ".".join(str(rnd.randrange(1, 255)) for _ in range(4))
        out.append(f"Dec 10 06:{i // 60 % 60:02d}:{i % 60:02d} gw sshd[{20000 + i}]: Accepted "
                   f"publickey for deploy from {a} port {1024 + i % 60000} ssh2 via {b}")
    return "\n".join(out) + "\n"


def access_log(lines: int) -> str:
    """An Apache combined-format access log (seeded): 3,000 client addresses, a time zone
    ('+0000') and a browser's user agent on every line, no secret."""
    import random

    rnd = random.Random(5)
    clients = [".".join(str(rnd.randrange(1, 255)) for _ in range(4)) for _ in range(3000)]
    paths = ["/", "/index.html", "/api/v1/items?id={}", "/static/app.js", "/login",
             "/search?q=shoes&page={}"]
    agents = ["Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
              "Chrome/120.0.0.0 Safari/537.36",
              "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 "
              "(KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1", "curl/8.4.0"]
    out = []
    for i in range(lines):
        out.append(f'{rnd.choice(clients)} - - [01/Mar/2026:12:{i // 60 % 60:02d}:{i % 60:02d} '
                   f'+0000] "GET {rnd.choice(paths).format(i)} HTTP/1.1" '
                   f'{rnd.choice([200, 200, 304, 404, 500])} {rnd.randrange(100, 90000)} '
                   f'"https://example.com/" "{rnd.choice(agents)}"')
    return "\n".join(out) + "\n"


def var_logs(limit: int = 20_000_000) -> str:
    """The readable plain-text files under /var/log, up to `limit` bytes together."""
    parts, total = [], 0
    for p in sorted(Path("/var/log").rglob("*")):
        try:
            if not p.is_file() or p.suffix in (".gz", ".xz", ".journal") or total > limit:
                continue
            raw = p.read_bytes()[:5_000_000]
        except OSError:
            continue
        if b"\x00" in raw[:4096]:
            continue
        parts.append(raw.decode("utf-8", "replace"))
        total += len(raw)
    return "\n".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=20_000)
    ap.add_argument("--loghub", default=str(ROOT.parent.parent / "shared" / "loghub"))
    ap.add_argument("--before", default="26a8144", help="git revision of the detector before")
    ap.add_argument("--previous", default="d06fb99",
                    help="git revision of a detector to time in the same run (default: the end of "
                         "session 8)")
    a = ap.parse_args()
    print(f"machine load (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    before = before_module(a.before) if a.before else None
    detect("warm up the rules")
    print_recall(recall(Redactor), recall(before.Redactor) if before else None)
    with tempfile.TemporaryDirectory() as tmp:
        texts = fixture_texts(Path(tmp), a.lines)
    logs = loghub_texts(Path(a.loghub))
    false_positives(texts, logs)
    previous = previous_module(a.previous) if a.previous else None
    if previous is not None:
        previous.detect("warm up the rules")
    code_false_positives(previous)
    print("\n3. speed (one core)")
    speed("\n".join(logs.values()), f"LogHub, {len(logs)} logs", before, previous)
    speed(texts["log"], "log fixture", before, previous)
    speed(texts["transcript"], "transcript fixture", before, previous)
    speed(ip_dense_log(a.lines), "synthetic IP-dense log (2 addresses a line)", before, previous)
    speed(access_log(a.lines), "synthetic access log (Apache combined format)", before, previous)
    var = var_logs()
    if var:
        speed(var, "/var/log (readable text files)", before, previous)
    print(f"machine load (1 min) at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
