"""A deterministic OpenAI-compatible embedding server for benchmarks: `python -m eval.fake_embedder`.

`POST /v1/embeddings` answers every input with a unit vector derived from a hash of the text, so a
benchmark times the pipeline's own cost, not a model's. The same text always gets the same vector; the
vectors carry no meaning. `GET /stats` says how many requests and texts it has served (a no-op run
should add none). Listens on 127.0.0.1 only; prints `PORT <n>` on stdout once it is ready.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

MODEL = "fake-hash"
MAX_BODY_BYTES = 64 * 1024 * 1024


def fake_vector(text: str, dim: int) -> np.ndarray:
    """Unit vector of `dim` float32 components from SHAKE-256 of the UTF-8 text."""
    raw = np.frombuffer(hashlib.shake_256(text.encode("utf-8")).digest(2 * dim), dtype=np.int16)
    vec = raw.astype(np.float32) + 0.5  # never all zeros
    return vec / np.linalg.norm(vec)


class Counters:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests = 0
        self.texts = 0


def make_handler(dim: int, counters: Counters) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive for clients that pool connections
        # The head and the body go out in two writes: with Nagle on, the body waits for the client's
        # delayed ACK of the head, ~40 ms per call that no real embedding server adds.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
            return

        def _send(self, status: int, payload: dict) -> None:
            body = json.dumps(payload, separators=(",", ":")).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            if self.path == "/stats":
                with counters.lock:
                    self._send(200, {"requests": counters.requests, "texts": counters.texts, "dim": dim})
            elif self.path in ("/health", "/v1/models"):
                self._send(200, {"status": "ok", "data": [{"id": MODEL, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:  # noqa: N802 - stdlib name
            if not self.path.rstrip("/").endswith("/embeddings"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length <= 0 or length > MAX_BODY_BYTES:
                self._send(413 if length > 0 else 400, {"error": {"message": "bad body length"}})
                return
            try:
                body = json.loads(self.rfile.read(length))
                inputs = body["input"]
            except (ValueError, KeyError, TypeError):
                self._send(400, {"error": {"message": "body must be JSON with an `input` field"}})
                return
            texts = [inputs] if isinstance(inputs, str) else inputs
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                self._send(400, {"error": {"message": "`input` must be a string or a list of strings"}})
                return
            data = [
                {"object": "embedding", "index": i, "embedding": fake_vector(t, dim).tolist()}
                for i, t in enumerate(texts)
            ]
            with counters.lock:
                counters.requests += 1
                counters.texts += len(texts)
            tokens = sum(len(t.split()) for t in texts)
            self._send(
                200,
                {
                    "object": "list",
                    "model": body.get("model") or MODEL,
                    "data": data,
                    "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                },
            )

    return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.fake_embedder", description=__doc__)
    parser.add_argument("--port", type=int, default=0, help="0 = any free port (printed on stdout)")
    parser.add_argument("--dim", type=int, default=384)
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(args.dim, Counters()))
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
