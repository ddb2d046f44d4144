"""LSP framing and an anyio JSON-RPC client for the Lean language server (``lake serve``).

Nothing heavy is imported here; import ``beam_runtime.lsp.client`` for the client.
"""
