"""Console scripts. Placeholder without delegation; the installer work adds the fast path."""

from __future__ import annotations


def lean_beam() -> None:
    from beam_runtime.cli.lean_beam import main

    main()


def beam_cli() -> None:
    from beam_runtime.cli.beam_cli import main

    main()


def lean_beam_mcp() -> None:
    from beam_mcp.main import main

    raise SystemExit(main())
