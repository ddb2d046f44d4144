"""``python -m tests.fake_lean``: run the fake Lean language server on stdio."""

from tests.fake_lean.server import main

raise SystemExit(main())
