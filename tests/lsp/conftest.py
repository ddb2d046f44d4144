from __future__ import annotations

from pathlib import Path

import pytest

from tests.lsp.harness import make_project


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)
