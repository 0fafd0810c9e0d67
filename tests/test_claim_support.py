"""The support rule for picked lines (rlm/verify/claim_support.py): a model's claim about a line
code quoted is verified only when the line carries the claim's distinctive content."""

from __future__ import annotations

import pytest

from rlm.verify.claim_support import claim_terms, support
from rlm.repo.corpus import RepoCorpus


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    from fixtures.repo import write_repo

    root = tmp_path_factory.mktemp("repo")
    write_repo(root)
    return RepoCorpus(str(root))


def test_terms_are_identifiers_numbers_quoted_strings_and_content_words():
    t = claim_terms('Invoices apply VAT_RATE = Decimal("0.19") per invoice line.')
    assert ("ident", "vat_rate") in t and ("literal", "0.19") in t and ("number", "0.19") in t
    assert ("word", "invoic") in t and ("word", "apply") in t, t
    assert not any(w in ("per", "line") for _, w in t)  # stopwords carry nothing


def test_a_true_claim_on_its_line_is_supported(repo):
    s = support("Invoices apply a VAT rate of 0.19, rounded half up to the cent.",
                'VAT_RATE = Decimal("0.19")', repo)
    assert s.ok and s.numbers_ok and "0.19" in s.present


def test_an_invented_claim_on_a_real_line_is_not_supported(repo):
    s = support("The service stores passwords in plain text",
                "def hash_password(password: str, salt: bytes | None = None) -> str:", repo)
    assert not s.ok  # it shares "password" with the line, and nothing else
    assert "does not support the claim" in s.reason() and "stor" in s.missing


def test_a_claim_on_a_neighbouring_line_fails_on_its_number(repo):
    # the true claim of line 14 (`return cleaned[:1000]`) picked one line off
    s = support("normalize_comment silently truncates order comments to 1000 characters.",
                "from parcelpost.orders.comments import normalize_comment", repo)
    assert not s.ok and not s.numbers_ok and "none of its numbers" in s.reason()


def test_a_constant_the_line_names_supplies_its_value(repo):
    line = "limit = max(1, min(limit, MAX_PAGE_SIZE))"
    claim = "list_orders clamps the requested limit to MAX_PAGE_SIZE = 100."
    assert support(claim, line, repo).ok  # code found MAX_PAGE_SIZE = 100 in the repository
    assert not support(claim, line).numbers_ok  # without the repository: 100 is not there
    assert not support("MAX_PAGE_SIZE is 100.", line, repo).ok  # a bare value is line 10's


def test_no_distinctive_content_is_no_support():
    assert not support("It is there.", "MAX_RETRIES = 3").ok
