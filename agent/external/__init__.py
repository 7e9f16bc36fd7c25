"""Tools of external MCP servers an admin added (CONTRACT.md, "External MCP tools")."""
