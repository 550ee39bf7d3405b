"""A small real `/rerank` server for tests (TEI and vLLM answer shapes, and the ways a server fails).

Relevance is how many query words a document contains: a real, if tiny, cross-encoder.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class RerankServer:
    """A tiny `/rerank` server; `mode` decides the answer of the next requests."""

    def __init__(self) -> None:
        self.mode = "tei"
        self.bodies: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.bodies.append(body)
                docs = body.get("documents") or body.get("texts") or []
                # relevance: how many query words a document contains (a real, if tiny, cross-encoder)
                words = set(body["query"].lower().split())
                scores = [len(words & set(d.lower().split())) for d in docs]
                if server.mode == "slow":
                    time.sleep(1.0)
                if server.mode == "500":
                    return self._send(500, b'{"error": "model not loaded"}')
                if server.mode == "garbage":
                    return self._send(200, b"<html>not json</html>")
                if server.mode == "short":  # one document's score is missing
                    return self._send(200, json.dumps([{"index": 0, "score": 1.0}]).encode())
                if server.mode == "vllm":
                    results = [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]
                    return self._send(200, json.dumps({"results": results[::-1]}).encode())
                return self._send(
                    200, json.dumps([{"index": i, "score": s} for i, s in enumerate(scores)]).encode()
                )

            def _send(self, code: int, payload: bytes) -> None:
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/rerank"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
