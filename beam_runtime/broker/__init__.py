"""The Lean broker: sessions over the stock Lean server, documents, the sync barrier, tools.

Layout (one concern per module):
- ``errors``: the tool-level failure every broker operation raises.
- ``paths``, ``text``, ``versions``: resolving files, UTF-16 positions, monotonic versions.
- ``diagnostics``, ``progress``: normalizing Lean's publishes, readiness, document progress.
- ``goals``, ``navigation``, ``todo``, ``save``: per-tool result shaping.
- ``launch``, ``session``, ``documents``, ``manager``: running and owning ``lake serve``.
- ``backend``: the seam the MCP server dispatches Lean tools through.
"""
