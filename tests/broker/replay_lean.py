"""A stand-in server that answers with what real Lean sent (``../shared/real-lean/``).

``replay_lean.py CAPTURE URI``: replays the server-to-client frames of a real ``lean --server``
session (``wire-capture-newest-lean.jsonl``), with its document URI replaced by ``URI``. Each
request the client sends releases the captured frames up to the captured response with the
same id, so notifications and server requests arrive in their real order around the answers.

``replay_lean.py CAPTURE URI GOALS``: answers ``initialize`` with the captured result and each
``$/lean/plainGoal`` with the real answer recorded for its position in ``GOALS`` (an
``*.expected.out`` file of request params each followed by its answer); RPC is refused
(``-32601``) as a server without it would, so a client must fall back to ``plainGoal``.

Standard library only; frames are Content-Length framed compact JSON, as Lean writes them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, BinaryIO

CAPTURED_URI = "file:///P.lean"


def read_values(path: Path) -> list[Any]:
    """The JSON values of an ``*.expected.out`` excerpt, in order (``#`` lines skipped)."""
    text = "\n".join(
        line for line in path.read_text(encoding="utf-8").split("\n") if not line.startswith("#")
    )
    decoder = json.JSONDecoder()
    values, index = [], 0
    while True:
        while index < len(text) and text[index].isspace():
            index += 1
        if index >= len(text):
            return values
        value, index = decoder.raw_decode(text, index)
        values.append(value)


def request_answer_pairs(path: Path) -> list[tuple[dict[str, Any], Any]]:
    values = read_values(path)
    return list(zip(values[0::2], values[1::2], strict=True))


def capture_frames(path: Path, uri: str) -> list[dict[str, Any]]:
    frames = []
    for line in path.read_text(encoding="utf-8").splitlines():
        frame = json.loads(line.replace(CAPTURED_URI, uri))
        if "_source" not in frame:
            frames.append(frame)
    return frames


def _read(stream: BinaryIO) -> dict[str, Any] | None:
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    if length is None:
        return None
    message: dict[str, Any] = json.loads(stream.read(length).decode("utf-8"))
    return message


def _write(message: dict[str, Any]) -> None:
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def _is_response(frame: dict[str, Any]) -> bool:
    return "method" not in frame and "id" in frame


def replay_capture(frames: list[dict[str, Any]]) -> None:
    while True:
        message = _read(sys.stdin.buffer)
        if message is None or message.get("method") == "exit":
            return
        if "method" not in message or "id" not in message:
            continue
        while frames:
            frame = frames.pop(0)
            _write(frame)
            if _is_response(frame) and frame["id"] == message["id"]:
                break
        else:
            _write({"jsonrpc": "2.0", "id": message["id"], "result": None})


def serve_goals(frames: list[dict[str, Any]], goals: Path) -> None:
    initialize = next(frame for frame in frames if _is_response(frame))
    answers = {
        (params["position"]["line"], params["position"]["character"]): answer
        for params, answer in request_answer_pairs(goals)
    }
    while True:
        message = _read(sys.stdin.buffer)
        if message is None or message.get("method") == "exit":
            return
        if "method" not in message or "id" not in message:
            continue
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        method, params = message["method"], message.get("params") or {}
        if method == "initialize":
            reply["result"] = initialize["result"]
        elif method == "$/lean/plainGoal":
            position = params["position"]
            reply["result"] = answers.get((position["line"], position["character"]))
        elif method.startswith("$/lean/rpc/"):
            reply["error"] = {"code": -32601, "message": f"No request handler found for '{method}'"}
        else:
            reply["result"] = None
        _write(reply)


def main(argv: list[str]) -> int:
    frames = capture_frames(Path(argv[1]), argv[2])
    if len(argv) > 3:
        serve_goals(frames, Path(argv[3]))
    else:
        replay_capture(frames)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
