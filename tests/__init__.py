"""rlm's tests (a package, so that test helpers are imported as tests.NAME)."""
