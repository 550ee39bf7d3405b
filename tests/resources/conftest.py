"""Fixtures the resource tests share."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.resources.embed_server import Script, Server


@pytest.fixture
def serve() -> Iterator[Callable[[Script], Server]]:
    """Start loopback embedding servers that answer as a script says; all are closed after the test."""
    servers: list[Server] = []

    def start(script: Script) -> Server:
        servers.append(Server(script))
        return servers[-1]

    yield start
    for s in servers:
        s.close()
