"""Bad input on the librarian's routes gets a clear 4xx, never a 500 (issue 9, points 3-6 and 8).

The real app over a real vault; the inputs are the attack run's: non-ASCII Authorization headers on
every route of the app's table, 990 levels of JSON nesting, a lone surrogate, symlinks out of the vault
and in loops, a folder named like a note, a 300-character name, 16 simultaneous captures of one title.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from hippo_core.vault.vault_layout import INBOX
from hippo_resources.files import write_text_atomic
from hippo_settings import HippoSettings
from tests.security.conftest import AUTH, TOKEN, routes

# Authorization values as raw header bytes: UTF-8 text, Latin-1, bytes that are not text at all.
BAD_AUTH = [
    "Bearer tök".encode(),
    "Bearer 토큰".encode(),
    f"Bearer {TOKEN}é".encode(),
    f"Bearer {TOKEN}".encode() + b"\xff",
    b"Bearer \xc3\x28",
    "Bearér x".encode(),
    b"\xff\xfe",
]


@pytest.mark.parametrize("header", BAD_AUTH, ids=lambda h: repr(h)[:24])
def test_a_non_ascii_authorization_header_is_401_on_every_route(api: TestClient, header: bytes) -> None:
    table = routes(api.app)
    assert ("POST", "/api/v1/captures") in table and len(table) >= 13
    for method, path in table:
        r = api.request(method, path, headers={"Authorization": header}, content=b"{}")
        want = 200 if path == "/health" else 401
        assert r.status_code == want, (method, path, r.status_code, r.text[:200])
    # the right token still passes, byte for byte
    assert api.get("/api/v1/status", headers=AUTH).status_code == 200


@pytest.mark.parametrize("levels", [65, 990, 5000])
@pytest.mark.parametrize("shape", ["array", "object", "in-a-field"])
def test_deeply_nested_json_is_a_400_on_search_and_every_body_route(
    api: TestClient, levels: int, shape: str
) -> None:
    if shape == "array":
        body = "[" * levels + "]" * levels
    elif shape == "object":
        body = '{"a":' * levels + "1" + "}" * levels
    else:
        body = '{"query": "x", "lanes": ' + "[" * levels + "]" * levels + "}"
    if len(body) > 16 * 1024:
        body = body[: 8 * 1024] + body[-8 * 1024 :]  # still far too deep, under the body cap
    for method, path in routes(api.app):
        if method != "POST":
            continue
        r = api.post(path, content=body, headers={**AUTH, "content-type": "application/json"})
        assert r.status_code == 400, (path, r.status_code, r.text[:200])
        assert r.json()["error"]["code"] == "bad_json"


def test_nesting_inside_strings_and_ordinary_bodies_still_pass(api: TestClient) -> None:
    brackets = "[" * 3000  # in a string: not nesting
    r = api.post("/api/v1/search", json={"query": brackets[:900]}, headers=AUTH)
    assert r.status_code in (200, 503), r.text  # 503: this vault has no index yet; not a 400
    r = api.post("/api/v1/search", json={"query": "x", "lanes": [[[["wiki"]]]]}, headers=AUTH)
    assert r.status_code == 422  # shallow nesting reaches validation as before


LONE_SURROGATE = b'"\\udc00x"'


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/v1/bundle", b'{"question": ' + LONE_SURROGATE + b"}"),
        ("/api/v1/feedback", b'{"query": ' + LONE_SURROGATE + b', "anchor": "a", "useful": true}'),
        ("/api/v1/feedback", b'{"query": "q", "anchor": ' + LONE_SURROGATE + b', "useful": true}'),
        ("/api/v1/feedback", b'{"query": "q", "anchor": "a", "useful": ' + LONE_SURROGATE + b"}"),
        ("/api/v1/bundle", b'{"question": "q", "k": ' + LONE_SURROGATE + b"}"),
        ("/api/v1/bundle", b'{"question": "q", ' + LONE_SURROGATE + b": 1}"),  # as an unknown key
        ("/api/v1/captures", b'{"title": ' + LONE_SURROGATE + b', "summary": "s"}'),
        ("/api/v1/search", b'{"query": ' + LONE_SURROGATE + b"}"),
    ],
)
def test_a_lone_surrogate_is_a_clean_422(api: TestClient, path: str, body: bytes) -> None:
    r = api.post(path, content=body, headers={**AUTH, "content-type": "application/json"})
    assert r.status_code == 422, (path, r.status_code, r.text[:200])
    message = r.json()["error"]["message"]
    assert message and "\udc00" not in message
    r.content.decode("utf-8")  # the reply itself is valid UTF-8


def test_unreadable_document_refs_are_404(api: TestClient, fresh: HippoSettings, tmp_path: Path) -> None:
    vault = fresh.vault
    (vault / "20-wiki" / "real.md").write_text("---\ntitle: Real\n---\n# Real\n\ntext\n", encoding="utf-8")
    outside = tmp_path / "outside.md"
    outside.write_text("not in the vault\n", encoding="utf-8")
    os.symlink(outside, vault / "20-wiki" / "out.md")  # a symlink out of the vault
    os.symlink(tmp_path, vault / "20-wiki" / "outdir")  # a symlinked folder out of the vault
    os.symlink(vault / "20-wiki", vault / "30-notes.md")  # a symlinked folder named like a note
    os.symlink(vault / "loop-b.md", vault / "loop-a.md")  # a symlink loop
    os.symlink(vault / "loop-a.md", vault / "loop-b.md")
    (vault / "20-wiki" / "x.md").mkdir()  # a folder named x.md
    refs = [
        "20-wiki/out.md",
        "20-wiki/outdir/outside.md",
        "30-notes.md",
        "loop-a.md",
        "loop-a.md#heading",
        "20-wiki/x.md",
        "20-wiki/" + "a" * 300 + ".md",  # longer than a file name may be
        "a" * 300 + "/b.md",
        "20-wiki/missing.md",
    ]
    for ref in refs:
        r = api.get("/api/v1/documents", params={"ref": ref}, headers=AUTH)
        assert r.status_code == 404, (ref[:40], r.status_code, r.text[:200])
        assert r.json()["error"]["code"] == "not_found"
    ok = api.get("/api/v1/documents", params={"ref": "20-wiki/real.md"}, headers=AUTH)
    assert ok.status_code == 200 and ok.json()["title"] == "Real"


def test_sixteen_simultaneous_captures_of_one_title_all_land(api: TestClient, fresh: HippoSettings) -> None:
    n = 16
    start = threading.Barrier(n)
    statuses: list[int] = []
    paths: list[str] = []

    def capture(i: int) -> None:
        start.wait()
        r = api.post(
            "/api/v1/captures",
            json={"title": "Kafka offsets after a failed deploy", "summary": f"finding number {i}"},
            headers=AUTH,
        )
        statuses.append(r.status_code)
        if r.status_code == 201:
            paths.append(r.json()["path"])

    threads = [threading.Thread(target=capture, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [201] * n
    assert len(set(paths)) == n
    inbox = fresh.vault / INBOX
    notes = sorted(p for p in inbox.iterdir() if p.suffix == ".md")
    bodies = [p.read_text(encoding="utf-8") for p in notes]
    assert len(notes) == n
    assert sorted(
        next(line for line in b.splitlines() if line.startswith("finding")) for b in bodies
    ) == sorted(f"finding number {i}" for i in range(n))  # every capture whole, none overwritten
    assert not [p.name for p in inbox.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp")]


def test_a_killed_writers_temporary_is_removed_and_a_live_ones_kept(tmp_path: Path) -> None:
    """Unique temporary names must not pile up: the next write removes what a killed writer left."""
    target = tmp_path / "note.md"
    script = (
        "import sys, time; from pathlib import Path; from hippo_resources.files import temporary_sibling;"
        "t = temporary_sibling(Path(sys.argv[1])); t.write_text('half'); print(t.name, flush=True); time.sleep(60)"
    )
    writers = [
        subprocess.Popen([sys.executable, "-c", script, str(target)], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    names = [w.stdout.readline().strip() for w in writers]  # type: ignore[union-attr]
    writers[0].send_signal(signal.SIGKILL)
    writers[0].wait()
    try:
        write_text_atomic(target, "whole\n")
        left = sorted(p.name for p in tmp_path.iterdir())
    finally:
        writers[1].kill()
        writers[1].wait()
    assert left == sorted([names[1], "note.md"])  # the live writer's temporary stays
    assert target.read_text(encoding="utf-8") == "whole\n"


def test_capture_titles_with_backslashes_and_controls_round_trip(
    api: TestClient, fresh: HippoSettings
) -> None:
    """Issue 9 point 9: the capture note's frontmatter is written by the YAML library."""
    from hippo_core.vault import frontmatter

    for title in ("C:\\Users\\me\\notes", 'say "hi" \\ bye', "bell\x07 tab\t esc\x1b[0m"):
        r = api.post("/api/v1/captures", json={"title": title, "summary": "body"}, headers=AUTH)
        assert r.status_code == 201, r.text
        text = (fresh.vault / r.json()["path"]).read_text(encoding="utf-8")
        fm, _ = frontmatter.parse(text)
        assert fm.title == title
