from tests.broker.conftest import project, servers

__all__ = ["project", "servers"]
