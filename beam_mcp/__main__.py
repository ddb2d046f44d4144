"""`python -m beam_mcp`: the same command line as `lean-beam-mcp`."""

from beam_mcp.main import main

raise SystemExit(main())
