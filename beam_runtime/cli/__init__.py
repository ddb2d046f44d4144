"""Thin click front ends: `lean-beam` and `beam-cli`. Commands live one per module."""
