"""The ``lake serve`` session of one workspace and everything the broker mirrors of it.

Owns: starting Lean (``launch``), the session and its JSON-RPC traffic (``session``), the
per-process set of sessions (``manager``), open documents and their text (``documents``,
``text``, ``edits``, ``versions``, ``fingerprint``, ``paths``), what Lean reports about them
(``diagnostics``, ``progress``, ``leanwork``, ``header``), the sync barrier (``waiting``), the
recovery plan of an incomplete barrier (``recovery``) and what a running call tells its client
(``reporting``). Imports nothing from the other broker sub-packages.
"""
