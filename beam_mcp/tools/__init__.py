"""The 24 MCP tools: catalog data (cheap), input models (pydantic, lazy), schema generator."""
