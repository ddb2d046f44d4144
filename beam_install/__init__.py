"""Writes the install root and client configs: install, prune, and the `lean-beam` command."""
