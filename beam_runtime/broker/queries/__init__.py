"""Read-only questions about a synced document: hover, navigation, goals, todo items.

Owns: the question tools (``queries``), goal parsing from text (``goals``) and from Lean's
interactive RPC answers (``interactive``, ``rpc``), position forms (``positions``), navigation
answers (``navigation``) and todo items (``todo``). Builds on ``session`` only.
"""
