"""A protocol-faithful fake of the Lean 4 language server, Lake and elan, for tests.

Standard library only, so it also runs under a bare system ``python3``. See README.md.
"""
