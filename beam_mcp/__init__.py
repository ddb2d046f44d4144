"""Speaks MCP: protocol families, the tool registry, the stdio server, self-check."""
