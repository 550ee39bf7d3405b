"""Segments (runs of consecutive messages on one topic), exchanges, and the chunk rows of a conversation.

A subject buried in message 400 of a long session is easier to find as a segment of a few messages
than in a whole conversation; a segment ends at a long silence, when it grows too large, or when the
next message shares almost no content words with it.

A reply often makes sense only with the message it answers ("How long do you hold that pose?" →
"30 to 60 seconds"), so each message is also indexed as an *exchange*: the end of the message (or
messages, `EXCHANGE_CONTEXT_MESSAGES`) before it, then the message. The exchange row has the message's own
anchor, so a hit on it is a hit on the reply; the plain message row stays, so a message that stands alone
is not diluted by its neighbours. Message and exchange rows also carry the day the
message was written ("8 May 2023"), so a question that names a date can find it.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from pydantic import BaseModel, Field

from hippo_core.conversations import Conversation, Message
from hippo_core.index.chunking import ChunkParams, chunk_document, index_text
from hippo_core.ranking.time import iso_time
from hippo_core.vault.fingerprints import chunk_id, embed_hash, sha256_text

CONVERSATIONS_ROOT = "conversations"
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_\-]{2,}|[0-9]{2,}")
_HANGUL_RUN = re.compile(r"[\uac00-\ud7a3]+")
_STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "that",
        "this",
        "with",
        "you",
        "are",
        "was",
        "have",
        "but",
        "not",
        "what",
        "can",
        "all",
        "your",
        "from",
        "they",
        "will",
        "just",
        "there",
        "about",
        "would",
        "like",
        "how",
        "when",
        "its",
        "it's",
        "been",
        "then",
        "them",
        "also",
        "some",
    ]
)


class SegmentParams(BaseModel, frozen=True):
    max_chars: int = Field(default=1200, ge=200, description="A segment stops growing past this size.")
    min_messages: int = Field(default=3, ge=1, description="Shortest segment that a topic shift may end.")
    gap_minutes: float = Field(default=30.0, gt=0, description="Silence that always starts a new segment.")
    min_overlap: float = Field(
        default=0.08, ge=0, le=1, description="Shared-term fraction that keeps a topic."
    )


EXCHANGE_CONTEXT_CHARS = 400
"""How much of a previous message an exchange row carries (its end: where the question usually is)."""

EXCHANGE_CONTEXT_MESSAGES = 1
"""How many messages before a reply its exchange row carries. Chosen on LoCoMo conversation 26 through the
product path by fused Hit@1 + Hit@10 (one message and the day 0.355 + 0.838, two and the day 0.315 + 0.868,
one without the day 0.320 + 0.817); conversation 30 is the one reported (CHANGELOG.md)."""


def message_day(timestamp: str | None) -> str:
    """'8 May 2023' for an ISO timestamp; empty when there is none or it does not parse."""
    if not timestamp:
        return ""
    try:
        day = dt.datetime.fromisoformat(timestamp)
    except ValueError:
        return ""
    return f"{day.day} {day:%B %Y}"


def exchange_text(previous: str, text: str, max_context_chars: int = EXCHANGE_CONTEXT_CHARS) -> str:
    """The end of the previous message (cut at a word boundary), a newline, then the message itself."""
    previous = previous.strip()
    if len(previous) > max_context_chars:
        tail = previous[-max_context_chars:]
        cut = tail.find(" ")
        previous = tail[cut + 1 :] if 0 <= cut < len(tail) - 1 else tail
    return f"{previous}\n{text}" if previous else text


class Segment(BaseModel):
    conversation_id: str
    segment: int
    first_position: int
    last_position: int
    message_count: int
    text: str
    started: str | None = None
    ended: str | None = None


def terms(text: str) -> set[str]:
    """Content words (English) and Hangul bigrams: enough to notice that a topic changed."""
    out = {w.lower() for w in _WORD.findall(text)} - _STOP
    for run in _HANGUL_RUN.findall(text):
        out.update(run[i : i + 2] for i in range(max(len(run) - 1, 1)))
    return out


def _minutes(a: str | None, b: str | None) -> float:
    if not a or not b:
        return 0.0
    try:
        return (dt.datetime.fromisoformat(b) - dt.datetime.fromisoformat(a)).total_seconds() / 60
    except ValueError:
        return 0.0


def line(message: Message) -> str:
    return f"{message.role}: {message.text.strip()}"


def segment_messages(messages: list[Message], params: SegmentParams | None = None) -> list[Segment]:
    """Split one conversation's messages (tool traffic left out of the text) into topic runs."""
    params = params or SegmentParams()
    ordered = sorted((m for m in messages if not m.is_tool), key=lambda m: m.position)
    runs: list[list[Message]] = []
    current: list[Message] = []
    vocab: set[str] = set()
    size = 0
    for msg in ordered:
        words = terms(msg.text)
        if current:
            overlap = len(words & vocab) / len(words) if words else 1.0
            shift = len(current) >= params.min_messages and overlap < params.min_overlap
            silent = _minutes(current[-1].timestamp, msg.timestamp) > params.gap_minutes
            full = size + len(msg.text) > params.max_chars
            if shift or silent or full:
                runs.append(current)
                current, vocab, size = [], set(), 0
        current.append(msg)
        vocab |= words
        size += len(msg.text)
    if current:
        runs.append(current)
    out = []
    for number, run in enumerate(runs):
        stamps = [m.timestamp for m in run if m.timestamp]
        out.append(
            Segment(
                conversation_id=run[0].conversation_id,
                segment=number,
                first_position=run[0].position,
                last_position=run[-1].position,
                message_count=len(run),
                text="\n".join(line(m) for m in run),
                started=min(stamps) if stamps else None,
                ended=max(stamps) if stamps else None,
            )
        )
    return out


def conversation_path(conversation_id: str) -> str:
    return f"{CONVERSATIONS_ROOT}/{conversation_id}"


def _row(
    conv: Conversation,
    anchor: str,
    ordinal: int,
    text: str,
    model_id: str,
    indexed: str | None = None,
    day: str = "",
    **extra: Any,
) -> dict[str, Any]:
    """`text` is what a hit shows; `indexed` (default: `text`) is what the lanes search, after the title
    and the `day` the message was written."""
    path = conversation_path(conv.conversation_id)
    title = conv.title or f"{conv.source} conversation {conv.conversation_id[:8]}"
    idx = index_text(title, [day] if day else [], text if indexed is None else indexed)
    return {
        "chunk_id": chunk_id(path, anchor, ordinal),
        "path": path,
        "anchor": anchor,
        "heading": anchor.rsplit("#", 1)[-1],
        "heading_path": [],
        "ordinal": ordinal,
        "title": title,
        "text": text,
        "index_text": idx,
        "content_hash": sha256_text(idx),
        "embed_hash": embed_hash(model_id, "passage", idx),
        "lane": "conversations",
        "doc_type": "conversation",
        "status": "raw-source",
        "trust": "llm_context",
        "sector": None,
        "aliases": [],
        "tags": [conv.source],
        "conversation_id": conv.conversation_id,
        "project": conv.project,
        "date": iso_time(extra.get("updated")),  # the event time: when the message was written
        **extra,
    }


def conversation_chunk_rows(
    conv: Conversation,
    messages: list[Message],
    model_id: str,
    with_segments: bool = True,
    chunk_params: ChunkParams | None = None,
    segment_params: SegmentParams | None = None,
    with_exchanges: bool = True,
) -> list[dict[str, Any]]:
    """Chunk rows (the `chunks` table schema) for one conversation: one per message piece, one exchange per
    message that answers another (tool traffic excluded), one per segment.

    Anchors are stable: `conversations/<id>#m<position>` (message and exchange rows) and
    `conversations/<id>#s<segment>`.
    """
    path = conversation_path(conv.conversation_id)
    rows: list[dict[str, Any]] = []
    exchanges: list[dict[str, Any]] = []
    previous: list[Message] = []
    for msg in sorted(messages, key=lambda m: m.position):
        anchor = f"{path}#m{msg.position}"
        day = message_day(msg.timestamp)
        pieces = [p for p in (d.text for d in chunk_document(path, msg.text, chunk_params)) if p.strip()]
        pieces = pieces or ([msg.text] if msg.text.strip() else [])
        for ordinal, piece in enumerate(pieces):
            rows.append(
                _row(
                    conv, anchor, ordinal, f"{msg.role}: {piece}", model_id, day=day,
                    role=msg.role, is_tool=msg.is_tool, granularity="message",
                    position=msg.position, updated=msg.timestamp or conv.ended,
                )
            )  # fmt: skip
        if msg.is_tool or not pieces:
            continue
        if with_exchanges and previous:
            shown = f"{msg.role}: {pieces[0]}"
            context = "\n".join(line(m) for m in previous)
            exchanges.append(
                _row(
                    conv, anchor, len(pieces), shown, model_id, day=day,
                    indexed=exchange_text(context, shown, EXCHANGE_CONTEXT_CHARS * len(previous)),
                    role=msg.role, is_tool=False, granularity="exchange",
                    position=msg.position, updated=msg.timestamp or conv.ended,
                )
            )  # fmt: skip
        previous = [*previous, msg][-EXCHANGE_CONTEXT_MESSAGES:]
    rows.extend(exchanges)
    if with_segments:
        for seg in segment_messages(messages, segment_params):
            if seg.message_count < 2:
                continue  # a one-message segment is already a message chunk
            rows.append(
                _row(
                    conv, f"{path}#s{seg.segment}", 0, seg.text, model_id,
                    role="segment", is_tool=False, granularity="segment",
                    position=seg.first_position, updated=seg.ended or conv.ended,
                )
            )  # fmt: skip
    return rows
