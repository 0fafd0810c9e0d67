"""What the output guards accept and reject: numbers are answers, loops and prompt echoes are not.

Against the real fake HTTP server; the rejected raw reply is kept in the run record."""

from __future__ import annotations

import anyio

from rlm.api import AskOptions, ask_async
from rlm.models.openai_compat import OpenAICompatModel, reset_mode_cache
from rlm.store import RunStore

SERVICES = "".join(f"{name:<16}{port}/tcp\n" for name, port in
                   [("ftp", 21), ("ssh", 22), ("telnet", 23), ("smtp", 25), ("http", 80)] * 4)


def _run(path, question, server, **opts):
    reset_mode_cache()
    model = OpenAICompatModel("fake", server.url, timeout=5.0, max_attempts=2, backoff_base=0.01)
    return anyio.run(lambda: ask_async(str(path), question, AskOptions(**opts), model=model))


def test_a_bare_number_is_an_answer(tmp_path, fake_server):
    p = tmp_path / "services"
    p.write_text(SERVICES)
    fake_server.on("AnswerResult", lambda r, t: {"answer": "22", "cites": [2]})
    rep = _run(p, "which port does ssh use?", fake_server)
    assert rep.strategy == "direct"
    assert len(fake_server.requests) == 1  # accepted the first time, not retried
    assert rep.answer.split("\n\n")[:2] == ["**Found:** 1 cited line (`%s:2`)." % p, "22"]
    assert rep.coverage.complete


def test_a_repeated_fragment_is_still_rejected_and_kept_in_the_run_record(tmp_path, fake_server):
    p = tmp_path / "services"
    p.write_text(SERVICES)
    loop = "port port port port port port port port"
    fake_server.on("AnswerResult", lambda r, t: {"answer": loop, "cites": []})
    rep = _run(p, "which port does ssh use?", fake_server)
    assert len(fake_server.requests) == 3  # the first reply and two retries, all rejected
    assert not rep.coverage.complete and "degenerate" in rep.coverage.statement
    store = RunStore()
    rejected = store.events(rep.run_id, "rejected")
    assert len(rejected) == 3 and all(loop in e["data"]["reply"] for e in rejected)
    assert "degenerate" in rejected[0]["data"]["reason"]


def _keyword_mapper(keyword):
    import re

    def fn(req, text):
        found = [{"line": int(m.group(1)), "claim": f"the line reports {keyword}", "quote": keyword}
                 for m in re.finditer(r"^(\d+)\| (.*)$", text, re.M) if keyword in m.group(2)]
        return {"findings": found[:3]}
    return fn


def test_an_echoed_synthesis_prompt_is_rejected_and_retried(tmp_path, fake_server):
    p = tmp_path / "prose.txt"
    lines = [f"Paragraph {i} talks about routine matters and nothing else at all." for i in range(3000)]
    lines[1234] = "The committee approved the PLANNED change to the schedule."
    p.write_text("\n".join(lines) + "\n")
    fake_server.on("MapResult", _keyword_mapper("PLANNED"))
    replies = []

    def synth(req, text):  # first an echo of the prompt itself, then a real answer
        replies.append(text)
        if len(replies) == 1:
            return {"answer": text[:300], "cites": [1]}
        return {"answer": "The committee approved a change to the schedule.", "cites": [1]}

    fake_server.on("AnswerResult", synth)
    rep = _run(p, "what did the committee do?", fake_server, concurrency=4)
    assert len(replies) == 2
    assert "echo" in fake_server.requests_matching("rejected")[-1]["user_text"]
    assert rep.answer.split("\n\n")[1].startswith("The committee approved a change")
    assert "Question:" not in rep.answer and rep.coverage.complete


def test_an_echo_of_the_instructions_is_rejected(tmp_path, fake_server):
    p = tmp_path / "services"
    p.write_text(SERVICES)
    echo = ("You answer a question about a text whose lines are numbered. Use only the text. "
            "answer:")
    fake_server.on("AnswerResult", lambda r, t: {"answer": echo, "cites": [2]})
    rep = _run(p, "which port does ssh use?", fake_server)
    assert len(fake_server.requests) == 3
    assert echo not in rep.answer
    assert not rep.coverage.complete and "echo" in rep.coverage.statement


def test_quoting_the_evidence_is_not_an_echo(tmp_path, fake_server):
    p = tmp_path / "services"
    p.write_text(SERVICES)
    fake_server.on("AnswerResult", lambda r, t: {"answer": "ssh uses port 22: `ssh             "
                                                 "22/tcp`", "cites": [2]})
    rep = _run(p, "which port does ssh use?", fake_server)
    assert len(fake_server.requests) == 1 and rep.coverage.complete
