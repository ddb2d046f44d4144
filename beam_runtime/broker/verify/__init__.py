"""Answers from Lake's batch build: ``lean_verify`` and the ``lean_save`` checkpoint helpers.

Owns: the module graph and its cones (``cone``), bounded ``lake build`` runs (``lakebuild``),
build artifacts and module names (``save``), axiom questions (``axioms``), receipts
(``receipt``) and the verification itself (``verify``). Builds on ``session`` only; the scratch
documents it asks Lean through are handed in by the facade.
"""
