"""Moved to rlm.testing.mcp_client; this name stays until the tests import it from there."""

from rlm.testing.mcp_client import *  # noqa: F401,F403
from rlm.testing.mcp_client import connect, fake_model, server_args, server_env, structured, text_of  # noqa: F401
