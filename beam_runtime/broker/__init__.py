"""The Lean broker: Lean's language server driven for agents, grouped by concern.

Sub-packages, lowest first (``lint-imports`` holds them to this order):
- ``session/``: the ``lake serve`` session of a workspace, its documents, diagnostics and the
  sync barrier;
- ``queries/``: read-only questions (hover, navigation, goals, todo items);
- ``speculation/``: scratch documents, probes, handles and ``lean_try``;
- ``verify/``: ``lean_verify`` from Lake's batch build, receipts, the ``lean_save`` helpers;
- ``feedback/``: the local feedback report and its redaction.

Modules on top: ``service`` (the ``Broker`` facade the MCP layer calls), ``operations`` (the
document tools), ``standalone`` (one operation without MCP), and the shared vocabulary every
layer uses: ``errors``, ``fixes``, ``results`` and ``arguments`` (what operations read of
their arguments).
"""
