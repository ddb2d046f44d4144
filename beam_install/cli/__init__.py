"""Thin click front ends of `lean-beam`: one module per command, rendered by one renderer."""
