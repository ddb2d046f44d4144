"""``python -m beam_runtime.host``: the shared Lean host process (see ``main``)."""

from beam_runtime.host.main import main

raise SystemExit(main())
