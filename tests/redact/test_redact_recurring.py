"""The run's known secrets are found wherever they recur through a suffix index
(rlm.redact.recurring.Known): exactly what one `str.find` a secret found, in the same order,
whatever the bitmap lets through and wherever the text is cut into parts; and gitleaks'
stopwords and allowlist regexes, each read as one RE2 alternation, allow what they allowed one
by one (issue 21, item 4: an access log with a token on every line was quadratic)."""

from __future__ import annotations

import random
import string

import pytest

from rlm.redact import recurring
from rlm.redact.detect import Hit, detect
from rlm.redact.recurring import Known
from rlm.redact.redactor import Redactor
from rlm.redact.rules import rule_set

def _values(rnd: random.Random, n: int) -> list[str]:
    out = []
    for i in range(n):
        v = "".join(rnd.choice(string.ascii_letters + string.digits) for _ in range(rnd.randrange(6, 14)))
        if i % 7 == 3 and out:  # a value inside another, and one overlapping another's end
            v = out[-1][1:] + rnd.choice("xyz")
        if i % 11 == 5:
            v = "pässwörd-" + v  # non-ASCII
        if i % 13 == 6:
            v = rnd.choice(["ab", "xyz", "Q1"]) * 5  # periodic: it overlaps itself
        out.append(v)
    return out


def _by_find(text: str, hits, known) -> list[Hit]:
    """What rlm.redact.detect._recurring did before the databases: one str.find a value."""
    vals = dict.fromkeys(v for v in known if len(v) >= 6)
    vals.update(dict.fromkeys(h.value for h in hits if h.kind == "SECRET" and len(h.value) >= 6))
    out = []
    for v in sorted(vals, key=len, reverse=True):
        i = text.find(v)
        while i >= 0:
            out.append(Hit(i, i + len(v), "SECRET", v))
            i = text.find(v, i + len(v))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_the_suffix_index_finds_what_str_find_found(monkeypatch, seed):
    # a few bits a value: many windows that end no value pass the bitmap and are compared;
    # small parts: values that end across the parts' edges
    monkeypatch.setattr(recurring, "FIND_MAX", 4)
    monkeypatch.setattr(recurring, "BITS_PER_VALUE", 1 + seed % 3)
    monkeypatch.setattr(recurring, "WINDOWS", 7 + 50 * (seed % 2))
    # and past a few dozen secrets in memory, the rest on disk (rlm.redact.spill)
    monkeypatch.setattr(recurring, "MEMORY_SECRETS", [10**9, 12, 30][seed % 3])
    rnd = random.Random(seed)
    values = _values(rnd, 150)
    values += ["same-end-123456", "other-end-123456", "123456"]  # one key, three values
    known = Known()
    for i in range(0, len(values), 9):
        known.add(values[i:i + 9])
        seen = values[:i + 9]
        text = " ".join(rnd.choice(seen + ["filler", "Grüße", "=", "\n"])
                        + rnd.choice(["", "aa", "é"]) for _ in range(60))
        text += values[i] + values[i] + "ababababab"  # twice in a row; overlapping itself
        text += rnd.choice(seen)  # one at the very end
        own = [Hit(0, 6, "SECRET", text[:8]), Hit(0, 6, "SECRET", values[i])]
        assert known.recurring(text, own, Hit) == _by_find(text, own, seen)
        assert Known(seen, compiled=False).recurring(text, own, Hit) == _by_find(text, own, seen)
        assert known.recurring(values[i], [], Hit) == _by_find(values[i], [], seen)
    assert known._index is not None and len(known._index._by_key) < known._index._count
    assert (known._index.disk is not None) == (seed % 3 != 0) and len(known) == len(set(
        v for v in values if len(v) >= recurring.MIN_CHARS))
    assert all(v in known for v in values[::5] if len(v) >= recurring.MIN_CHARS)
    assert "never-seen-value" not in known


def test_a_secret_seen_long_ago_is_still_replaced_where_it_recurs(monkeypatch):
    monkeypatch.setattr(recurring, "FIND_MAX", 8)
    r = Redactor()
    first = r.redact("login ok password=Tr0ub4dor3xyzQ9 from bob")
    assert "Tr0ub4dor3xyzQ9" not in first
    for i in range(100):  # a hundred more secrets: the first one is in the index now
        r.redact(f"request {i} password=s3cr3tvalue{i:04d}xx")
    assert r._known._index is not None and r._known._index._count == 101
    later = r.redact("search terms: Tr0ub4dor3xyzQ9, s3cr3tvalue0042xx")
    assert "Tr0ub4dor3xyzQ9" not in later and "s3cr3tvalue0042xx" not in later
    assert later.count("⟨SECRET_") == 2


def test_a_run_s_bitmap_grows_with_its_secrets_and_keeps_them_all():
    rnd = random.Random(11)
    values = ["".join(rnd.choice(string.ascii_letters) for _ in range(20)) for _ in range(3000)]
    known = Known(values[:40])
    small = len(known._index._bits)
    known.add(values[40:])
    assert len(known._index._bits) * 8 >= recurring.BITS_PER_VALUE * 3000 and \
        len(known._index._bits) > small
    text = " ".join(values[::97])
    assert known.recurring(text, [], Hit) == _by_find(text, [], values)


def test_detect_with_values_reads_them_with_str_find():
    hits = detect("a list: hunter2secret, and again hunter2secret", ("hunter2secret",))
    assert [(h.start, h.value) for h in hits if h.kind == "SECRET"] == [(8, "hunter2secret"),
                                                                        (33, "hunter2secret")]


def test_stopwords_and_allowlist_regexes_read_as_one_alternation():
    import tomllib
    from importlib import resources

    import re2

    from rlm.redact.rules import _re2_options

    data = tomllib.loads(resources.files("rlm.recipes").joinpath("gitleaks.toml").read_text())
    opts = _re2_options()
    by_id = {r.id: r for r in rule_set().rules}
    rnd = random.Random(5)
    checked = 0
    pairs = [(spec_rule["id"], spec, allow) for spec_rule in data["rules"]
             for spec, allow in zip(spec_rule.get("allowlists", []),
                                    by_id[spec_rule["id"]].allows if spec_rule["id"] in by_id
                                    else ())]
    pairs.append(("(global)", data["allowlist"], rule_set().global_allow))
    for rule_id, spec, allow in pairs:
        if True:
            words = [w.lower() for w in spec.get("stopwords", [])]
            singles = []
            for rx in spec.get("regexes", []):
                try:
                    singles.append(re2.compile(rx, opts))
                except re2.error:
                    pass
            samples = [rnd.choice(words) if words else "", "zzqqxx", "EXAMPLE", "${VAR}",
                       "".join(rnd.choice(string.printable[:94]) for _ in range(30))]
            samples += [f"x{w}y" for w in words[:30]] + [w[:-1] for w in words[:30]]
            for v in samples:
                low = v.lower()
                if words:
                    assert bool(allow.stop.search(low)) == any(w in low for w in words), v
                assert any(x.search(v) for x in allow.regexes) == \
                    any(x.search(v) for x in singles), (rule_id, v)
                checked += 1
    assert checked > 100 and any(len(a.stopwords) > 1000 for _, _, a in pairs)


def test_past_the_memory_cap_the_bitmap_keeps_the_bits_of_what_moved_to_disk(monkeypatch):
    """Once secrets move to disk the bitmap stops growing: rebuilt from the keys still in
    memory, it would lose theirs, and their recurrences would go unseen."""
    monkeypatch.setattr(recurring, "MEMORY_SECRETS", 100)
    rnd = random.Random(12)
    values = ["".join(rnd.choice(string.ascii_letters) for _ in range(20)) for _ in range(3000)]
    known = Known(values[:40])
    for i in range(40, 3000, 50):
        known.add(values[i:i + 50])
    assert known._index.disk is not None and len(known._rank) <= 150
    text = " ".join(values[::97])
    assert known.recurring(text, [], Hit) == _by_find(text, [], values)
