"""Loader for BEIR-format retrieval sets: `corpus.jsonl`, `queries.jsonl`, `qrels.tsv` in one folder.

The benchmark reads public sets in place (their licences forbid copying them into the repo), so the
loader must fail with a message that names the file and line instead of a traceback: a truncated
download or a hand-edited file is the usual cause of a bad run.
"""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hippo_core.index.segments import exchange_text

__all__ = ["BeirError", "BeirSet", "Doc", "Query", "load_beir", "passage_text"]

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "eval-data"
"""Where the public sets live next to the project (read in place, never copied: see their licences)."""
CORPUS_FILE = "corpus.jsonl"
QUERIES_FILE = "queries.jsonl"
QRELS_FILE = "qrels.tsv"
QRELS_COLUMNS = ("query-id", "corpus-id", "score")


class BeirError(ValueError):
    """The folder is not a readable BEIR set; the message says which file and line."""


@dataclass(frozen=True)
class Doc:
    """One corpus entry; `extra` keeps fields such as `conv` for filtering and reporting."""

    id: str
    title: str
    text: str
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Query:
    id: str
    text: str
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class BeirSet:
    """A loaded set. `qrels` keeps only relevant pairs (score > 0): metrics use binary relevance."""

    name: str
    folder: Path
    docs: list[Doc]
    queries: list[Query]
    qrels: dict[str, set[str]]
    qrels_pairs: int = 0
    qrels_missing_docs: int = 0  # relevant pairs whose doc is not in the corpus (counted, kept)

    def evaluable_queries(self) -> list[Query]:
        """Queries with at least one relevant doc; BEIR skips the rest, and so do we."""
        return [q for q in self.queries if self.qrels.get(q.id)]


def passage_text(doc: Doc) -> str:
    """The one chunk a doc becomes: title, newline, text (just the text when there is no title)."""
    return f"{doc.title}\n{doc.text}" if doc.title else doc.text


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise BeirError(f"{path}: file not found")
    with open(path, encoding="utf-8") as fh:
        try:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise BeirError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from exc
                if not isinstance(row, dict):
                    raise BeirError(f"{path}:{lineno}: expected a JSON object, got {type(row).__name__}")
                yield lineno, row
        except UnicodeDecodeError as exc:
            raise BeirError(f"{path}: not UTF-8 ({exc.reason} at byte {exc.start})") from exc


def _field_id(row: dict[str, Any], where: str) -> str:
    value = row.get("_id")
    if value is None or (isinstance(value, str) and not value.strip()):
        raise BeirError(f"{where}: missing `_id`")
    return str(value)


def _field_text(row: dict[str, Any], key: str, where: str, required: bool) -> str:
    value = row.get(key)
    if value is None:
        if required:
            raise BeirError(f"{where}: missing `{key}`")
        return ""
    if not isinstance(value, str):
        raise BeirError(f"{where}: `{key}` must be a string, got {type(value).__name__}")
    return value


def load_beir(folder: Path | str) -> BeirSet:
    """Read and validate a BEIR folder; raises BeirError with file:line on any problem."""
    folder = Path(folder)
    if not folder.is_dir():
        raise BeirError(f"{folder}: not a directory")
    corpus_path, queries_path, qrels_path = folder / CORPUS_FILE, folder / QUERIES_FILE, folder / QRELS_FILE
    for path in (corpus_path, queries_path, qrels_path):  # all three before reading anything large
        if not path.is_file():
            raise BeirError(
                f"{path}: file not found (a BEIR folder needs {CORPUS_FILE}, {QUERIES_FILE}, {QRELS_FILE})"
            )

    docs: list[Doc] = []
    seen: set[str] = set()
    for lineno, row in _jsonl(corpus_path):
        where = f"{corpus_path}:{lineno}"
        doc_id = _field_id(row, where)
        if doc_id in seen:
            raise BeirError(f"{where}: duplicate doc `_id` {doc_id!r}")
        seen.add(doc_id)
        extra = {k: v for k, v in row.items() if k not in ("_id", "title", "text")}
        docs.append(
            Doc(
                doc_id,
                _field_text(row, "title", where, required=False),
                _field_text(row, "text", where, required=True),
                extra,
            )
        )
    if not docs:
        raise BeirError(f"{corpus_path}: no documents")

    queries: list[Query] = []
    seen_q: set[str] = set()
    for lineno, row in _jsonl(queries_path):
        where = f"{queries_path}:{lineno}"
        qid = _field_id(row, where)
        if qid in seen_q:
            raise BeirError(f"{where}: duplicate query `_id` {qid!r}")
        seen_q.add(qid)
        extra = {k: v for k, v in row.items() if k not in ("_id", "text")}
        queries.append(Query(qid, _field_text(row, "text", where, required=True), extra))

    qrels: dict[str, set[str]] = {}
    pairs = missing = 0
    try:
        with open(qrels_path, encoding="utf-8", newline="") as fh:
            reader = csv.reader(fh, delimiter="\t")
            header = next(reader, None)
            if header is None or tuple(h.strip() for h in header[:3]) != QRELS_COLUMNS:
                raise BeirError(
                    f"{qrels_path}:1: expected the header `{' '.join(QRELS_COLUMNS)}` (tab-separated), "
                    f"got {header!r}"
                )
            for lineno, cells in enumerate(reader, start=2):
                if not cells or not "".join(cells).strip():
                    continue
                if len(cells) < 3:
                    raise BeirError(f"{qrels_path}:{lineno}: expected 3 tab-separated columns, got {cells!r}")
                try:
                    score = float(cells[2])
                except ValueError as exc:
                    raise BeirError(f"{qrels_path}:{lineno}: score {cells[2]!r} is not a number") from exc
                if score <= 0:
                    continue
                qid, doc_id = cells[0].strip(), cells[1].strip()
                if doc_id not in qrels.setdefault(qid, set()):
                    qrels[qid].add(doc_id)
                    pairs += 1
                    missing += doc_id not in seen
    except UnicodeDecodeError as exc:
        raise BeirError(f"{qrels_path}: not UTF-8 ({exc.reason} at byte {exc.start})") from exc
    return BeirSet(
        name=folder.resolve().name,
        folder=folder,
        docs=docs,
        queries=queries,
        qrels=qrels,
        qrels_pairs=pairs,
        qrels_missing_docs=missing,
    )


# --- what a benchmark indexes and asks -------------------------------------------------------
EXCHANGE_SUFFIX = "::exchange"
"""Row id suffix of a conversation turn indexed with the end of the turn before it."""


def conv_of(extra: Any) -> str | None:
    value = extra.get("conv")
    return None if value is None or str(value) == "" else str(value)


def select_queries(beir: BeirSet, max_queries: int | None, seed: int) -> list[Query]:
    """Queries with qrels; a seeded sample (kept in file order) when `max_queries` is smaller."""
    queries = beir.evaluable_queries()
    if max_queries is not None and len(queries) > max_queries:
        keep = set(random.Random(seed).sample(range(len(queries)), max_queries))
        queries = [q for i, q in enumerate(queries) if i in keep]
    return queries


def check_conversations(beir: BeirSet, queries: Sequence[Query]) -> None:
    """Per-conversation mode needs `conv` on every doc and every selected query: say which one lacks it."""
    for doc in beir.docs:
        if conv_of(doc.extra) is None:
            raise BeirError(
                f"{beir.folder / CORPUS_FILE}: doc {doc.id!r} has no `conv` field; "
                "--per-conversation needs one on every doc"
            )
    for q in queries:
        if conv_of(q.extra) is None:
            raise BeirError(
                f"{beir.folder / QUERIES_FILE}: query {q.id!r} has no `conv` field; "
                "--per-conversation needs one on every query"
            )


def index_rows(docs: Sequence[Doc], exchanges: bool) -> list[tuple[str, int, str]]:
    """(row id, doc position, text) for every doc, then one exchange row per doc that follows another doc
    of the same conversation (file order), carrying the end of that doc before its own text."""
    rows = [(d.id, i, passage_text(d)) for i, d in enumerate(docs)]
    if not exchanges:
        return rows
    ids = {d.id for d in docs}
    last: dict[str, int] = {}
    for i, d in enumerate(docs):
        conv = conv_of(d.extra)
        if conv is None:
            continue
        if conv in last:
            row_id = f"{d.id}{EXCHANGE_SUFFIX}"
            if row_id in ids:
                raise BeirError(f"doc id {row_id!r} clashes with the benchmark's exchange rows")
            rows.append((row_id, i, exchange_text(passage_text(docs[last[conv]]), passage_text(d))))
        last[conv] = i
    return rows


def to_docs(row_ids: Sequence[str], row_doc: dict[str, str]) -> list[str]:
    """Corpus ids in order of their best row, each once."""
    return list(dict.fromkeys(row_doc[r] for r in row_ids))


def beir_folders(data: Path, sets: str | None) -> list[Path]:
    """The set folders under `data` (those with a corpus), or only the comma-separated `sets`, by name."""
    folders = sorted(p for p in data.iterdir() if (p / CORPUS_FILE).exists()) if data.is_dir() else []
    if sets:
        wanted = set(sets.split(","))
        folders = [f for f in folders if f.name in wanted]
    return folders
