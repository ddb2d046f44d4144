"""Reads the install root and runs Lean: identity, resolver, toolchain, LSP client, broker."""
