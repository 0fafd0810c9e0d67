"""The fake OpenAI-compatible server is rlm.testing's now (rlm/testing/fake_server.py); this name
stays for the tests that still import `fake_server` until they import rlm.testing directly."""

from rlm.testing import *  # noqa: F401,F403
from rlm.testing.fake_server import main
from rlm.testing.wire import estimate_tokens  # noqa: F401

if __name__ == "__main__":
    main()
