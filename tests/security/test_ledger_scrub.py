"""Nothing the ledger stores keeps a credential (issue 9, point 12).

Searches, bundles and feedback whose query holds a key go through the real librarian over an indexed
vault; then the SQLite file itself is read (every column of every table, and its raw bytes).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from fastapi.testclient import TestClient

from hippo_server.app import create_app
from hippo_settings import HippoSettings
from tests.security.secret_shapes import examples

AUTH = {"Authorization": "Bearer ledger-token"}


def stored_text(db: Path) -> str:
    """Every value of every table, as text."""
    with sqlite3.connect(db) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        values = [str(v) for t in tables for row in conn.execute(f'SELECT * FROM "{t}"') for v in row]
    return "\n".join(values)


def test_queries_holding_keys_are_stored_redacted(indexed: HippoSettings) -> None:
    settings = indexed.model_copy(update={"mcp_token": "ledger-token"})
    # one of each kind the scanner knows, said the way a person pastes it into a question
    said = {kind: (text, secret) for kind, text, secret in examples(seed=12, per_shape=1)}
    assert len(said) >= 20
    with TestClient(create_app(settings), headers=AUTH) as client:
        anchor = client.post("/api/v1/search", json={"query": "침실 온도"}).json()["results"][0]["anchor"]
        for kind, (text, _) in said.items():
            question = text  # the pasted line itself (the scanner reads env-style assignments at line start)
            assert client.post("/api/v1/search", json={"query": question}).status_code == 200, kind
            assert client.post("/api/v1/bundle", json={"question": question}).status_code == 200, kind
            r = client.post("/api/v1/feedback", json={"query": question, "anchor": anchor, "useful": False})
            assert r.status_code == 200, kind
    db = settings.ledger_path
    text = stored_text(db)
    raw = b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))  # the file, its WAL and journal
    leaked = [kind for kind, (_, secret) in said.items() if secret in text or secret.encode() in raw]
    assert not leaked, f"stored unredacted: {leaked}"
    assert text.count("[REDACTED:") >= 3 * len(said)  # query log, feedback, and gaps or the bundle cache
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM query_log").fetchone()[0] >= len(said)
        assert conn.execute("SELECT count(*) FROM feedback").fetchone()[0] == len(said)
