"""The platform's tools for other agents over MCP Streamable HTTP (CONTRACT.md, "MCP server")."""
