"""`hippo serve`: the librarian under uvicorn, with the limits uvicorn does not set by itself.

uvicorn waits forever for a request's headers: a client that sends one byte a second holds a connection
(and a file descriptor) for as long as it likes. `HeaderTimeoutProtocol` closes a connection that has
not sent a complete request head within `header_timeout` seconds of opening or of its previous
response (with a 408 when nothing was answered yet). The body has its own limit in the app
(`GuardMiddleware`: `body_timeout`, then 408), so every phase of a request is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import threading
from typing import TYPE_CHECKING

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from hippo_settings import HippoSettings

if TYPE_CHECKING:
    from hippo_search.pipeline import SearchEngine

_TIMEOUT_BODY = b"request head not received in time"
TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
    + f"content-length: {len(_TIMEOUT_BODY)}\r\n\r\n".encode()
    + _TIMEOUT_BODY
)


class HeaderTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol plus a deadline for each request head."""

    header_timeout: float = 10.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_timer: asyncio.TimerHandle | None = None
        self._arm()

    def _arm(self) -> None:
        """Start waiting for the next request head; `self.cycle` changes when one arrives."""
        self._disarm()
        armed_cycle = self.cycle
        self._head_timer = self.loop.call_later(self.header_timeout, self._expired, armed_cycle)

    def _disarm(self) -> None:
        if getattr(self, "_head_timer", None) is not None:
            self._head_timer.cancel()  # type: ignore[union-attr]
            self._head_timer = None

    def _expired(self, armed_cycle: object) -> None:
        self._head_timer = None
        if self.cycle is not armed_cycle or self.transport.is_closing():
            return  # a new request head arrived in time; its response re-arms the timer
        if self.conn.our_state is h11.IDLE and self.conn.their_state is h11.IDLE:
            self.transport.write(TIMEOUT_RESPONSE)  # between requests: say why before closing
        self.transport.close()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def server_config(settings: HippoSettings, warm_up: bool = False) -> uvicorn.Config:
    """The uvicorn configuration of `hippo serve`: the app, the address and every timeout. `warm_up`
    starts `warm` on a background thread once the app is built (see `serve`)."""
    from hippo_server.app import create_app

    protocol = type(
        "HeaderTimeoutProtocol", (HeaderTimeoutProtocol,), {"header_timeout": settings.header_timeout}
    )
    app = create_app(settings)
    if warm_up:
        threading.Thread(target=warm, args=(app.state.engine,), name="hippo-warm-index", daemon=True).start()
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level="warning",
        http=protocol,
        timeout_keep_alive=5,
        h11_max_incomplete_event_size=16 * 1024,  # a request head over 16 KiB is refused (400)
    )


def warm(engine: SearchEngine) -> None:
    """Load what the first search needs (`SearchEngine.warm`), then give the heap that loading freed back
    to the system: glibc keeps it otherwise (13 MiB once Kiwi's model is built, 47 MiB with its multi-word
    dictionary; malloc_trim takes 5 ms)."""
    engine.warm()
    with contextlib.suppress(OSError, AttributeError):  # not glibc (musl, macOS): nothing to give back
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def serve(settings: HippoSettings) -> None:
    """Run the librarian. What the first search needs is loaded in the background from the start, so
    that it overlaps the imports instead of following them: Kiwi's model (seconds; kiwipiepy builds it
    without holding the GIL) on one thread right away, the index and the query embedder on another once
    the app exists. A search that comes earlier waits for the part it needs, never loads it twice."""
    from hippo_core.index.tokenize import get_kiwi

    threading.Thread(target=get_kiwi, name="hippo-warm-kiwi", daemon=True).start()
    uvicorn.Server(server_config(settings, warm_up=True)).run()
