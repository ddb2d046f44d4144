"""Only UTF-8 on the MCP wire: other encodings and invalid bytes are -32700."""

from __future__ import annotations

import json
import random

from tests.mcp.helpers import Server, modern

LIST = json.dumps(modern(1, "tools/list"))
ENCODED = [
    LIST.encode("utf-16-le"),
    LIST.encode("utf-16-be"),
    LIST.encode("utf-16"),  # with a BOM
    LIST.encode("utf-32-le"),
    LIST.encode("utf-32"),
    b"\xef\xbb\xbf" + LIST.encode(),  # UTF-8 with a BOM
    LIST.replace("tools/list", "tools/\udc80list").encode("utf-8", "surrogatepass"),
    LIST.replace("tools/list", "tools/li\xe9st").encode("latin-1"),
    LIST.encode()[:-1] + b"\xc0\xaf}",  # an overlong encoding
]


def test_lines_in_other_encodings_are_parse_errors() -> None:
    server = Server()
    try:
        for line in ENCODED:
            server.send(line + b"\n")
            reply = server.read()
            assert reply["id"] is None and reply["error"]["code"] == -32700, (line, reply)
        reply = server.ask(modern(2, "tools/list"))
        assert reply["result"]["tools"]
    finally:
        server.kill()


def test_random_bytes_never_kill_the_server() -> None:
    rng = random.Random(7)
    server = Server()
    try:
        lines = [
            bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))) for _ in range(300)
        ]
        lines = [line.replace(b"\n", b"") for line in lines]
        lines = [line for line in lines if line.strip()]
        server.send(b"".join(line + b"\n" for line in lines))
        reply = server.ask(modern("last", "tools/list"))
        assert reply["result"]["tools"]
        code, _, rest = server.close()
        assert code == 0 and rest == []
    finally:
        server.kill()
