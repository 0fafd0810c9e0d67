"""The MCP server for agents (`rlm mcp`): tools, roots, progress, sampling model."""
