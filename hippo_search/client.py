"""The fast path of `hippo search`: ask the running librarian over HTTP, with the standard library only.

Importing the pipeline costs seconds (Chroma, kiwipiepy, Dagster); a librarian already has them loaded.
The command asks it only when its `/health` names the same stores (`store`, a hash of HIPPO_HOME), so a
librarian serving another vault never answers for this one.
"""

from __future__ import annotations

import hashlib
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

HEALTH_TIMEOUT_S = 0.5  # a loopback librarian answers /health in milliseconds
SEARCH_TIMEOUT_S = 60.0  # the first query of a fresh librarian loads the generation and the embedder


class LibrarianError(Exception):
    """The librarian refused the request (4xx/5xx): its error code and message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def store_id(home: Path | str) -> str:
    """Names the stores a librarian serves without showing the path (/health needs no token)."""
    return hashlib.sha256(str(Path(home).expanduser().resolve()).encode()).hexdigest()[:16]


def librarian_url(host: str, port: int) -> str:
    """Where `hippo serve` listens with these settings (a wildcard address is reached on loopback)."""
    host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _request(
    url: str, timeout: float, body: dict[str, Any] | None = None, token: str | None = None
) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="GET" if body is None else "POST")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - a configured http URL
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        try:
            return exc.code, json.loads(exc.read())
        except ValueError:
            return exc.code, None


def remote_search(
    url: str, home: Path | str, request: dict[str, Any], token: str | None = None
) -> dict[str, Any] | None:
    """The envelope from the librarian at `url`, or None when no librarian serves these stores there (or it
    refuses our token): the caller then searches in process. Raises LibrarianError when it answers an error."""
    try:
        status, health = _request(f"{url}/health", HEALTH_TIMEOUT_S)
    except (OSError, ValueError):
        return None
    if status != 200 or not isinstance(health, dict) or health.get("store") != store_id(home):
        return None
    try:
        status, body = _request(f"{url}/api/v1/search", SEARCH_TIMEOUT_S, request, token)
    except (OSError, ValueError):
        return None
    if status == 200 and isinstance(body, dict):
        return body
    if status == 401:
        return None
    error = (body or {}).get("error", {}) if isinstance(body, dict) else {}
    raise LibrarianError(status, error.get("code", "error"), error.get("message", f"HTTP {status}"))


def ask_librarian(
    url: str, home: Path | str, path: str, body: dict[str, Any], token: str | None, timeout: float
) -> dict[str, Any] | None:
    """POST `body` to `path` on the librarian serving these stores, everything within `timeout` seconds;
    None when none serves them, it refuses, errs or is too slow (the caller then does without)."""
    import time

    deadline = time.monotonic() + timeout
    try:
        # a loaded machine answers /health slowly: up to a third of the time given, at least 0.5 s
        status, health = _request(f"{url}/health", min(max(HEALTH_TIMEOUT_S, timeout / 3), timeout))
        if status != 200 or not isinstance(health, dict) or health.get("store") != store_id(home):
            return None
        left = deadline - time.monotonic()
        if left <= 0.01:
            return None
        status, answer = _request(f"{url}{path}", left, body, token)
    except (OSError, ValueError):
        return None
    return answer if status == 200 and isinstance(answer, dict) else None
