"""The shared Lean host: one process per workspace that serves its broker to many agents.

Layers, lowest first (docs/HOST.md describes the whole design):
- ``transport``: the Unix socket (binding with mode 0600, the peer's uid) and the frames on it;
- ``rpc``: JSON-RPC 2.0 over frames: requests, answers, notifications and cancellation;
- ``protocol``: the host protocol's typed messages, the one schema of record, and its version;
- ``place``: where hosts live (the socket directory, short hashed names, the lock beside each);
- ``server`` and ``main``: the host process; ``start`` and ``client``: the agents' side;
  ``listing``: what ``lean-beam host list|stop`` and ``doctor`` read.
"""
