from tests.broker.conftest import servers

__all__ = ["servers"]
