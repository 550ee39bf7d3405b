"""The librarian's request and response models: they are the search library's (`hippo_search.envelope`).

Here what belongs to the librarian's faces: FastAPI's own request errors as one line, replies that
encode whatever the input held, and failures: the one exception → status mapping (`failure_of`) that
REST and MCP share, the one JSON error body (`error_response`) and the one-line failure log.
"""

from __future__ import annotations

import logging
import logging.handlers
import queue
import sys
import threading
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError

from hippo_core.agents.work_memory import Refused, WorkMemoryError
from hippo_core.safety.scrub import scrub, scrub_value
from hippo_core.safety.text_input import BadTextError
from hippo_core.vault.frontmatter import FrontmatterError
from hippo_resources.chunk_store import CorruptTableError
from hippo_resources.sql_access import StoreError
from hippo_resources.vault import VaultError
from hippo_search.envelope import (
    UNTRUSTED_NOTICE,
    BundleRequest,
    FeedbackRequest,
    Mode,
    SearchHit,
    SearchRequest,
    SearchResponse,
    Section,
    validation_message,
)
from hippo_search.pipeline import NotFoundError, NotIndexedError, SearchEngine
from hippo_work.conversations import CaptureRejected, ConversationNotFound

__all__ = [
    "UNTRUSTED_NOTICE",
    "Failure",
    "BundleRequest",
    "FeedbackRequest",
    "Mode",
    "SearchHit",
    "SearchRequest",
    "SearchResponse",
    "Section",
    "error_response",
    "failure_of",
    "failure_response",
    "log_failure",
    "printable",
    "read_document",
    "redacted",
    "request_error_message",
    "validation_message",
]


def printable(text: str) -> str:
    """`text` with lone surrogates replaced by `?`: a reply that echoes bad input must still encode."""
    return text.encode("utf-8", "replace").decode("utf-8")


def request_error_message(exc: RequestValidationError) -> str:
    """FastAPI's request errors (bodies and parameters it parsed) as `validation_message` words them,
    never echoing the input: a lone surrogate in a key or value cannot break the 422."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "body"
        parts.append(f"{loc}: {err['msg'].removeprefix('Value error, ')}")
    return printable("; ".join(parts))


# --- failures: one mapping from an exception to a status, a code and a reason --------------------------
WORK_STATUS = {"refused": 422, "invalid_cursor": 409, "conflict": 409, "not_found": 404,
               "unavailable": 503, "invalid_request": 422}  # fmt: skip
MAX_REASON_CHARS = 500


@dataclass(frozen=True)
class Failure:
    """What a caller is told about a failed request: REST sends `status` and `{"error": …}`, MCP a tool
    error whose text starts with `code:`."""

    status: int
    code: str
    message: str
    extra: dict[str, Any] = field(default_factory=dict)

    def tool_text(self) -> str:
        return f"{self.code}: {self.message}"


def failure_of(exc: BaseException) -> Failure:
    """The one exception → status mapping of REST and MCP (most specific first). Anything not listed is
    a defect of the librarian: 500 `internal_error`, its type named, its text not echoed."""
    if isinstance(exc, WorkMemoryError):
        extra = {"kind": exc.kind} if isinstance(exc, Refused) else {}
        return Failure(WORK_STATUS.get(exc.code, 422), exc.code, exc.reason, extra)
    if isinstance(exc, ValidationError):
        return Failure(422, "invalid_request", validation_message(exc))
    if isinstance(exc, CaptureRejected):
        return Failure(422, "rejected", str(exc))
    if isinstance(exc, FrontmatterError):
        return Failure(422, "bad_frontmatter", f"the note's frontmatter cannot be read: {exc}")
    if isinstance(exc, NotFoundError | ConversationNotFound):
        return Failure(404, "not_found", str(exc).strip("'\""))
    if isinstance(exc, NotIndexedError):
        return Failure(503, "not_indexed", str(exc))
    if isinstance(exc, VaultError):
        return Failure(422, "refused", str(exc))
    if isinstance(exc, RecursionError):
        return Failure(422, "invalid_request", "the input nests too deeply")
    if isinstance(exc, RuntimeError) and str(exc).startswith("Symlink loop"):
        return Failure(422, "refused", "a symlink loop is on the way")
    if isinstance(exc, FileNotFoundError | IsADirectoryError | NotADirectoryError):
        return Failure(404, "not_found", f"no readable file there ({type(exc).__name__})")
    if isinstance(exc, OSError | CorruptTableError | StoreError):
        what = getattr(exc, "strerror", None) or type(exc).__name__
        return Failure(503, "unavailable", f"a store could not be read or written ({what}); try again")
    if isinstance(exc, BadTextError | ValueError | LookupError):
        return Failure(422, "invalid_request", str(exc))
    return Failure(
        500, "internal_error", f"internal error ({type(exc).__name__}); the librarian's log says where"
    )


def error_response(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    """The librarian's one JSON error body: `{"error": {"code", "message", …}}`, the reason scrubbed of
    credentials, on one printable line and bounded."""
    return JSONResponse(
        status_code=status, content={"error": {"code": code, "message": reason(message), **extra}}
    )


def failure_response(failure: Failure) -> JSONResponse:
    return error_response(failure.status, failure.code, failure.message, **failure.extra)


def reason(message: str) -> str:
    """A reason as callers and the log see it: credentials redacted, one line, at most 500 characters."""
    text = scrub(printable(" ".join(message.split()))).text
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 1] + "…"


# Failures are logged on a thread of their own: a request (on the event loop or not) only puts one record
# on a queue; formatting and writing happen elsewhere, one line each, never a rendered traceback.
_failure_log = logging.getLogger("hippo.server.failures")
_failure_queue: queue.SimpleQueue[logging.LogRecord] = queue.SimpleQueue()
_failure_listener: logging.handlers.QueueListener | None = None
_listener_lock = threading.Lock()


def _start_failure_log() -> None:
    global _failure_listener
    with _listener_lock:
        if _failure_listener is not None:
            return
        out = logging.StreamHandler(sys.stderr)
        out.setFormatter(logging.Formatter("%(asctime)s hippo-librarian %(levelname)s %(message)s"))
        _failure_listener = logging.handlers.QueueListener(_failure_queue, out)
        _failure_listener.start()
        _failure_log.addHandler(logging.handlers.QueueHandler(_failure_queue))
        _failure_log.propagate = False
        _failure_log.setLevel(logging.INFO)


def log_failure(where: str, failure: Failure, exc: BaseException) -> None:
    """One line per failed request, off the caller's thread; a 500 says which file and line raised."""
    if _failure_listener is None:
        _start_failure_log()
    place = ""
    if failure.status == 500 and exc.__traceback__ is not None:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        place = f" at {Path(frame.filename).name}:{frame.lineno}"
    level = (
        logging.ERROR if failure.status == 500 else logging.WARNING if failure.status > 500 else logging.INFO
    )
    _failure_log.log(
        level, "%s -> %d %s: %s%s (%s)", where, failure.status, failure.code, reason(failure.message),
        place, type(exc).__name__,
    )  # fmt: skip


def read_document(engine: SearchEngine, ref: str) -> Section:
    """`engine.get` for REST and MCP alike: a symlink out of the vault (VaultError) or in a loop, a folder
    named x.md, a name too long for the file system: no document there (NotFoundError, 404)."""
    try:
        return engine.get(ref)
    except (OSError, VaultError) as exc:
        raise NotFoundError(f"no readable document at {ref!r} ({type(exc).__name__})") from None
    except RuntimeError as exc:
        if "loop" not in str(exc):
            raise
        raise NotFoundError(f"no readable document at {ref!r} (symlink loop)") from None


def redacted(model: BaseModel) -> dict[str, Any]:
    """A result as JSON with every credential shape redacted (`[REDACTED:kind]`): a person's note may
    hold a token; it stays in their file, never in what an agent receives (issue 22 item 7)."""
    return scrub_value(model.model_dump(mode="json"))
