"""The public Python API: the names `rlm` exports are pinned (like httpx's test_exported_members),
each is what it says, and a library user can run a question with an in-process scripted model."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import rlm
from rlm.testing import ScriptedModel

EXPORTED = sorted([
    "__version__",
    "ask", "ask_async", "audit", "audit_async", "mine", "mine_async", "get_model",
    "AskOptions", "AuditOptions", "MineOptions", "RunOptions",
    "Report", "AuditReport", "MineReport", "Model",
    "RlmError", "UsageError", "ModelUnreachable", "ModelCallError", "ContextTooLong",
    "BudgetExhausted", "PathRefused", "RunsUnreadable", "EvidenceError", "ScanInterrupted",
])


def test_exported_members_are_pinned():
    assert sorted(rlm.__all__) == EXPORTED
    assert len(set(rlm.__all__)) == len(rlm.__all__)


@pytest.mark.parametrize("name", [n for n in EXPORTED if n != "__version__"])
def test_every_export_resolves_and_has_its_own_docstring(name):
    obj = getattr(rlm, name)
    doc = inspect.getdoc(obj) or ""
    if isinstance(obj, type):
        doc = obj.__dict__.get("__doc__") or ""  # not inherited, not dataclass's signature line
    assert doc.strip() and not doc.startswith(f"{name}("), f"rlm.{name} has no docstring"


def test_the_functions_stay_functions_once_their_packages_are_imported():
    import rlm.repo.audit  # noqa: F401 - the packages audit() and mine() run
    import rlm.repo.mine  # noqa: F401

    from rlm import Report, ask, audit, mine

    assert all(inspect.isfunction(f) for f in (ask, audit, mine))
    assert rlm.audit is audit and rlm.mine is mine
    assert Report.__name__ == "Report"


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'asks'"):
        rlm.asks  # noqa: B018


def test_importing_rlm_imports_no_engine():
    code = ("import sys, rlm; heavy = [m for m in ('rlm.api', 'httpx', 'pydantic', 'anyio') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_error_has_an_exit_code_from_the_one_table():
    from rlm import errors

    codes = {errors.EXIT_OK, errors.EXIT_INTERNAL, errors.EXIT_USAGE, errors.EXIT_INCOMPLETE}
    assert codes == {0, 1, 2, 3}
    for name in EXPORTED:
        obj = getattr(rlm, name)
        if isinstance(obj, type) and issubclass(obj, rlm.RlmError):
            assert obj.exit_code in codes
    assert rlm.UsageError.exit_code == errors.EXIT_USAGE
    assert rlm.PathRefused.exit_code == errors.EXIT_USAGE


def test_ask_with_a_scripted_model(tmp_path):
    log = tmp_path / "s.log"
    log.write_text("boot ok\n10:02 server restarted after a crash\nall good\n")
    model = ScriptedModel().on("AnswerResult", lambda msgs, schema: {
        "answer": "The server restarted at 10:02 after a crash.", "cites": [2]})
    rep = rlm.ask(str(log), "when did the server restart?", rlm.AskOptions(strategy="direct"),
                  model=model)
    assert isinstance(rep, rlm.Report) and rep.strategy == "direct"
    assert "10:02" in rep.answer and rep.coverage.complete
    assert [(f.source.line_start, f.verified) for f in rep.findings] == [(2, True)]
    assert [c.schema_name for c in model.calls] == ["AnswerResult"]
    assert "10:02 server restarted" in model.calls[0].messages[-1]["content"]


def test_a_scripted_model_citing_a_line_that_is_not_there_is_marked(tmp_path):
    log = tmp_path / "s.log"
    log.write_text("boot ok\n10:02 server restarted after a crash\nall good\n")
    model = ScriptedModel().on("AnswerResult", lambda msgs, schema: {
        "answer": "It restarted at 11:45.", "cites": [9]})  # a line that does not exist
    rep = rlm.ask(str(log), "when did the server restart?", rlm.AskOptions(strategy="direct"),
                  model=model)
    assert rep.findings == [] and rep.evidence.rejected == 1
    assert "11:45 [unverified]" in rep.answer  # the number is in no line code read
