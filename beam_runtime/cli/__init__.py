"""Shared command-line plumbing: the lazy click group, result rendering, and `beam-cli`."""
