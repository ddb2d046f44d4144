"""Speculative execution: running tactics and commands without touching the real document.

Owns: the scratch pool and its configuration (``scratch``, ``pool``), what a probe sends and how
its answer reads (``probes``), continuation handles (``handles``), whether a scratch worker's
imports are stale (``freshness``), the run tools (``speculation``) and ``lean_try`` (``trying``,
its answer in ``grid``). Builds on ``session`` and asks ``queries`` for goals.
"""
