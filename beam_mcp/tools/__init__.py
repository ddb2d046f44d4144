"""The MCP tools: the catalog table (cheap), handlers, input models (pydantic, lazy), schema."""
