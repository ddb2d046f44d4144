"""``lean_search``: declarations of a workspace and its dependencies' sources, indexed in SQLite."""
