"""Redaction on the repository commands (`rlm mine`; audit shares the same model hook): the
real fake HTTP server records every request."""

from __future__ import annotations

import json

from tests import repo_responders as R
from rlm.fixtures.repo import write_repo
from rlm.repo.mine import MineOptions, mine

EMAIL, PASSWORD = "ops.lead@parcel-corp.com", "Tr0ub4dor3xyz"


def test_mine_sends_no_planted_value_and_quotes_the_file(fake_server, tmp_path):
    root = tmp_path / "repo"
    write_repo(root)
    (root / "parcelpost" / "contacts.py").write_text(
        '"""Who to call."""\n\n'
        f'ADMIN_EMAIL = "{EMAIL}"  # the admin email for paging\n'
        f'DB_URL = "postgres://svc:{PASSWORD}@db.internal/app"\n')
    seen: list[str] = []

    def pick_admin(req, text):
        seen.append(text)
        picks = [{"n": n, "claim": f"{path} sets {t.strip()[:80]}"}
                 for n, path, t in R.candidate_rows(text) if "ADMIN_EMAIL" in t]
        return {"picks": picks[:1]}

    fake_server.on("PickResult", pick_admin)
    rep = mine(str(root), ["What is the admin email?"],
               MineOptions(model="fake", base_url=fake_server.url, redact=True))
    assert seen and any("⟨EMAIL_1⟩" in t for t in seen)
    for r in fake_server.requests:
        body = json.dumps(r["body"], ensure_ascii=False)
        assert EMAIL not in body and PASSWORD not in body
    [q] = rep.questions
    assert q.verified, q
    assert EMAIL in q.verified[0].quote  # the quote is taken from the file by code
    assert rep.redaction.enabled and rep.redaction.kinds.get("EMAIL") == 1
    assert "redacted before leaving this machine" in rep.coverage.statement
