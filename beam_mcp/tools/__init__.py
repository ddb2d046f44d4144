"""The MCP tools: catalog data (cheap), input models (pydantic, lazy), schema generator."""
