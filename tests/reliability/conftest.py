"""What the reliability tests share: a fake HTTP embedder that counts its calls, and settings that use it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hippo_settings import HippoSettings
from tests.reliability.servers import FakeEmbedder


def fake_embedder_settings(
    embedder: FakeEmbedder, vault: Path, tmp_path: Path, extra: dict[str, str] | None = None
) -> HippoSettings:
    """Settings whose embedder is `embedder` (its own embedding cache, so its call count is the truth)."""
    return HippoSettings.from_env(
        {"HIPPO_EMBED_URL": embedder.url, "HIPPO_EMBED_MODEL": "fake-hash", **(extra or {})},
        vault=vault,
        home=tmp_path / "home",
    ).model_copy(update={"embed_cache_path": tmp_path / "cache.sqlite"})


@pytest.fixture
def embedder() -> Iterator[FakeEmbedder]:
    fake = FakeEmbedder().start()
    yield fake
    fake.stop()


@pytest.fixture
def http_settings(tmp_path: Path, vault: Path, embedder: FakeEmbedder) -> HippoSettings:
    return fake_embedder_settings(embedder, vault, tmp_path)
