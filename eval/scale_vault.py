"""A synthetic vault of N notes built from BEIR corpora, for `python -m eval.scale`.

Deliberately free of project code (only the standard library and `git`): the vault is the benchmark's
input, so it must not change when the code under test changes. Every note is Markdown with frontmatter,
a title line and several `##` sections whose paragraphs are corpus passages; sizes are chosen so the
project's chunker (900 characters, paragraphs packed whole) makes about ten chunks per note.
Deterministic for a given corpus folder, seed and note count.
"""

from __future__ import annotations

import json
import random
import subprocess
from dataclasses import dataclass
from pathlib import Path

CORPUS_FILE = "corpus.jsonl"
QUERIES_FILE = "queries.jsonl"

SECTIONS_PER_NOTE = (4, 5)  # inclusive range of `##` sections per note
SECTION_CHARS = 1_300  # a section takes passages until it has at least this many characters
PASSAGE_MAX_CHARS = 850  # longer passages are cut at a word boundary: one passage, one paragraph
PASSAGE_MIN_CHARS = 20
ARCHIVED_SHARE = 0.02  # a few archived notes, so the search's status filter has something to exclude
SECTORS = ("research", "health", "welfare", "travel", "engineering")
INBOX_FILES = 3
GIT_ENV = {
    "GIT_AUTHOR_NAME": "scale-bench",
    "GIT_AUTHOR_EMAIL": "scale-bench@localhost",
    "GIT_COMMITTER_NAME": "scale-bench",
    "GIT_COMMITTER_EMAIL": "scale-bench@localhost",
}
# Folders of a vault laid out by `hippo init` (repeated here on purpose: no project code).
FOLDERS = (
    "00-inbox",
    "00-inbox/.processed",
    "05-todo",
    "10-sources",
    "20-wiki",
    "30-reviews/staging",
    "30-reviews/approvals",
    "50-ops",
    "90-system",
)


class DataError(ValueError):
    """The data folder holds no usable corpus."""


@dataclass(frozen=True)
class Passage:
    set_name: str
    title: str
    text: str


@dataclass(frozen=True)
class Corpora:
    """Passages and queries per set, in file order."""

    passages: dict[str, list[Passage]]
    queries: dict[str, list[str]]

    @property
    def set_names(self) -> list[str]:
        return sorted(self.passages)


@dataclass(frozen=True)
class GeneratedVault:
    root: Path
    notes: list[str]  # vault-relative paths of the generated notes, in generation order
    inbox: list[str]
    bytes: int


def set_folders(data: Path) -> list[Path]:
    """`data` itself when it is one BEIR set, else its sub-folders that hold a corpus."""
    if (data / CORPUS_FILE).is_file():
        return [data]
    if not data.is_dir():
        raise DataError(f"{data}: no such folder")
    folders = sorted(p for p in data.iterdir() if (p / CORPUS_FILE).is_file())
    if not folders:
        raise DataError(f"{data}: no folder with a {CORPUS_FILE}")
    return folders


def _clean(text: str) -> str:
    """One paragraph: whitespace collapsed, cut at a word boundary below PASSAGE_MAX_CHARS."""
    text = " ".join(text.split())
    if len(text) <= PASSAGE_MAX_CHARS:
        return text
    cut = text.rfind(" ", PASSAGE_MAX_CHARS // 2, PASSAGE_MAX_CHARS)
    return text[: cut if cut > 0 else PASSAGE_MAX_CHARS]


def _jsonl(path: Path) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{lineno}: not JSON ({exc.msg})") from None
            if isinstance(row, dict):
                rows.append(row)
    return rows


def load_corpora(data: Path) -> Corpora:
    passages: dict[str, list[Passage]] = {}
    queries: dict[str, list[str]] = {}
    for folder in set_folders(data):
        name = folder.name
        rows = _jsonl(folder / CORPUS_FILE)
        kept = [
            Passage(name, " ".join(str(r.get("title") or "").split()), _clean(str(r.get("text") or "")))
            for r in rows
        ]
        kept = [p for p in kept if len(p.text) >= PASSAGE_MIN_CHARS]
        if kept:
            passages[name] = kept
        qfile = folder / QUERIES_FILE
        if qfile.is_file():
            texts = [" ".join(str(r.get("text") or "").split()) for r in _jsonl(qfile)]
            queries[name] = [t for t in texts if t and len(t.encode("utf-8")) <= 1000]
    if not passages:
        raise DataError(f"{data}: no passage of at least {PASSAGE_MIN_CHARS} characters")
    return Corpora(passages=passages, queries=queries)


def sample_queries(corpora: Corpora, n: int, seed: int) -> list[str]:
    """`n` queries drawn round-robin over the sets (so every language is represented), shuffled."""
    rng = random.Random(f"queries-{seed}")
    pools = {name: rng.sample(qs, len(qs)) for name, qs in sorted(corpora.queries.items()) if qs}
    if not pools:
        raise DataError("no queries in the data folder")
    out: list[str] = []
    i = 0
    while len(out) < n:
        for name in pools:
            qs = pools[name]
            out.append(qs[i % len(qs)])
            if len(out) == n:
                break
        i += 1
    rng.shuffle(out)
    return out


def _heading(p: Passage, k: int) -> str:
    words = (p.title or p.text).replace("#", " ").split()[:6]
    return f"{k}. " + " ".join(words)


def _yaml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)  # a JSON string is a valid YAML scalar


def note_text(rng: random.Random, corpora: Corpora, number: int) -> tuple[str, str]:
    """(vault-relative path, Markdown) of note `number`: passages of one set, in sections."""
    set_name = rng.choice(corpora.set_names)
    pool = corpora.passages[set_name]
    first = pool[rng.randrange(len(pool))]
    raw_title = (first.title or " ".join(first.text.split()[:5]))[:60]
    title = "".join(ch for ch in raw_title if ch.isprintable()).replace("/", "-") + f" ({number:05d})"
    sections: list[str] = []
    for k in range(1, rng.randint(*SECTIONS_PER_NOTE) + 1):
        paras: list[str] = []
        size = 0
        lead = first if k == 1 else pool[rng.randrange(len(pool))]
        while size < SECTION_CHARS:
            p = lead if not paras else pool[rng.randrange(len(pool))]
            paras.append(p.text)
            size += len(p.text) + 2
        sections.append(f"## {_heading(lead, k)}\n\n" + "\n\n".join(paras))
    archived = rng.random() < ARCHIVED_SHARE
    day = 1 + number % 28
    sector = SECTORS[number % len(SECTORS)]
    folder = f"20-wiki/{sector}" if number % 2 else f"notes/{set_name}"
    front = "\n".join(
        [
            "---",
            "type: concept",
            f"status: {'archived' if archived else ('canonical' if number % 7 == 0 else 'reference')}",
            "trust: human_edit",
            f"title: {_yaml_str(title)}",
            f"created: 2025-{1 + number % 12:02d}-{day:02d}",
            f"updated: 2026-{1 + number % 12:02d}-{day:02d}",
            f"tags: [scale, {set_name}]",
            "---",
        ]
    )
    body = f"# {title}\n\n" + "\n\n".join(sections) + "\n"
    return f"{folder}/note-{number:05d}.md", f"{front}\n\n{body}"


def inbox_texts(rng: random.Random, corpora: Corpora) -> dict[str, str]:
    """A few inbox drops (Markdown and plain text) for the `sources` asset to ingest."""
    out: dict[str, str] = {}
    names = corpora.set_names
    for i in range(INBOX_FILES):
        pool = corpora.passages[names[i % len(names)]]
        paras = [pool[rng.randrange(len(pool))].text for _ in range(4)]
        if i % 3 == 2:
            out[f"00-inbox/clipping-{i}.txt"] = "\n\n".join(paras) + "\n"
        else:
            out[f"00-inbox/clipping-{i}.md"] = f"# Clipping {i}\n\n" + "\n\n".join(paras) + "\n"
    return out


def git(root: Path, *args: str) -> None:
    import os

    subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, env={**os.environ, **GIT_ENV}
    )


def generate_vault(root: Path, corpora: Corpora, notes: int, seed: int) -> GeneratedVault:
    """Write the vault under `root` (which must not exist) and commit it to a fresh git repository."""
    root.mkdir(parents=True)
    for folder in FOLDERS:
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / ".gitkeep").touch()
    (root / "HOME.md").write_text(
        "---\ntype: map\nstatus: reference\ntrust: human_edit\ntitle: Home\n---\n\n# Home\n\nScale benchmark vault.\n",
        encoding="utf-8",
    )
    rng = random.Random(f"vault-{seed}")
    paths: list[str] = []
    total = 0
    for number in range(notes):
        rel, text = note_text(rng, corpora, number)
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        target.write_bytes(data)
        total += len(data)
        paths.append(rel)
    inbox = inbox_texts(rng, corpora)
    for rel, text in inbox.items():
        data = text.encode("utf-8")
        (root / rel).write_bytes(data)
        total += len(data)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "scale benchmark vault")
    return GeneratedVault(root=root, notes=paths, inbox=sorted(inbox), bytes=total)


def marker_word(seed: int, what: str) -> str:
    """A made-up Latin word that no corpus contains, so a lexical search finds only the edited text."""
    rng = random.Random(f"marker-{seed}-{what}")
    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    return "qx" + "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(5))


def edit_one_paragraph(root: Path, rel: str, marker: str, corpora: Corpora, seed: int) -> str:
    """Replace one body paragraph of the note with a new one that carries `marker`; returns the new text."""
    path = root / rel
    text = path.read_text(encoding="utf-8")
    blocks = text.split("\n\n")
    body = [
        i
        for i, b in enumerate(blocks)
        if i > 0 and not b.startswith(("#", "---")) and "\n---" not in b and b.strip()
    ]
    if not body:
        raise DataError(f"{rel}: no paragraph to edit")
    rng = random.Random(f"edit-{seed}")
    target = body[len(body) // 2]
    pool = corpora.passages[corpora.set_names[0]]
    new = f"{marker} {pool[rng.randrange(len(pool))].text}"
    blocks[target] = new
    path.write_text("\n\n".join(blocks), encoding="utf-8")
    return new


def add_note(root: Path, rel: str, marker: str, corpora: Corpora, seed: int) -> None:
    """A new note, written as a person would (frontmatter, sections), carrying `marker`."""
    rng = random.Random(f"add-{seed}")
    _, text = note_text(rng, corpora, 99_999)
    head, sep, rest = text.partition("\n## ")
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{head}\n{marker} was added by the scale benchmark.\n{sep}{rest}", encoding="utf-8")
