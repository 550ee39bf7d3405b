from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from hippo_server.app import create_app
from hippo_settings import HippoSettings

TOKEN = "test-token-123"


@pytest.fixture
def secured(indexed: HippoSettings) -> HippoSettings:
    return indexed.model_copy(update={"mcp_token": TOKEN})


@pytest.fixture
def client(secured: HippoSettings):  # noqa: ANN201
    with TestClient(create_app(secured), headers={"Authorization": f"Bearer {TOKEN}"}) as c:
        yield c
