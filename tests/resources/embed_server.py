"""A loopback stand-in for an outside OpenAI-compatible embeddings server, shared by the embedder tests."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# (status, extra headers, body) for one request, from the request number and body; status 0 hangs up
Script = Callable[[int, dict[str, Any]], tuple[int, dict[str, str], bytes]]


class Server:
    """An HTTP/1.1 (keep-alive) embeddings endpoint on 127.0.0.1 that answers as `script` says and
    records every request: its time, its body and the client's port (one port per TCP connection)."""

    def __init__(self, script: Script) -> None:
        self.log: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:
                    n = len(outer.log)
                    outer.log.append(
                        {
                            "t": time.monotonic(),
                            "body": body,
                            "headers": dict(self.headers),
                            "port": self.client_address[1],
                        }
                    )
                status, headers, payload = script(n, body)
                if status == 0:  # hang up without an answer
                    self.close_connection = True
                    return
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
