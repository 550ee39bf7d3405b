"""What an extraction returns, the limits it works within, and the one error it raises."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field, field_validator

Format = Literal["pdf", "docx", "xlsx", "pptx", "hwpx", "html"]
Unit = Literal["page", "slide", "sheet"]
ErrorKind = Literal[
    "unsupported",  # a file name this package does not read
    "too_large",  # over `max_bytes`, or more pages, slides or cells than the limits allow
    "zip_bomb",  # an archive whose members or uncompressed size are over the limits
    "xml_too_large",  # a package part whose XML is bigger, or holds more elements, than a reader may build
    "encrypted",  # needs a password
    "no_text_layer",  # a scanned PDF: pictures of text, nothing to read without OCR
    "corrupt",  # truncated or not the format its name says
    "empty",  # read fine, but holds no text: never indexed as an empty source
]

MiB = 1024 * 1024


class ExtractLimits(BaseModel, frozen=True):
    """Bounds checked before and while parsing, so a hostile file costs little."""

    max_bytes: int = Field(default=50 * MiB, ge=1)
    max_zip_members: int = Field(default=5_000, ge=1)
    max_unzipped_bytes: int = Field(default=500 * MiB, ge=1)
    max_pages: int = Field(default=2_000, ge=1)  # PDF pages and PPTX slides
    max_cells: int = Field(default=500_000, ge=1)  # XLSX cells read, over all sheets
    max_chars: int = Field(default=20_000_000, ge=1)  # Markdown characters produced
    # XML a reader builds a tree of (python-docx, python-pptx, ElementTree: ~150-250 bytes per element):
    # each part's unzipped size, and the elements of all such parts, counted by a streaming pass first.
    max_xml_part_bytes: int = Field(default=64 * MiB, ge=1)
    max_xml_elements: int = Field(default=1_000_000, ge=1)


_PLACEHOLDER_TITLE = re.compile(
    r"\(?(?:untitled(?: document)?|anonymous|unspecified|no title|title|document ?\d*|presentation ?\d*"
    r"|book ?\d*|sheet ?\d*)\)?",
    re.IGNORECASE,
)
_OFFICE_PREFIX = re.compile(r"microsoft (?:word|powerpoint|excel|office word) - ", re.IGNORECASE)
_OFFICE_SUFFIX = re.compile(r"\.(?:docx?|pptx?|xlsx?|rtf|odt)$", re.IGNORECASE)


def metadata_title(raw: str | None) -> str | None:
    """A document's own title, or None when it is a writer's placeholder ("untitled", "(anonymous)", "Document1",
    "Microsoft Word - report.docx" gives "report"): the source then takes its heading or file name."""
    title = " ".join((raw or "").split())
    title = _OFFICE_SUFFIX.sub("", _OFFICE_PREFIX.sub("", title, count=1)).strip()
    if not title or _PLACEHOLDER_TITLE.fullmatch(title):
        return None
    return title


class Extraction(BaseModel):
    """A document read into Markdown. `anchors` are the heading texts a citation can point at."""

    format: Format
    markdown: str
    title: str | None = None  # from the document's own metadata, when it has one (`metadata_title`)
    unit: Unit | None = None  # what the anchors count; None for flowing text (DOCX, HWPX, HTML)
    unit_count: int = 0
    anchors: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    @field_validator("title")
    @classmethod
    def _real_title(cls, value: str | None) -> str | None:
        return metadata_title(value)


class ExtractionError(ValueError):
    """A document that cannot become a source; `reason` is a sentence for a person (run metadata)."""

    def __init__(self, kind: ErrorKind, reason: str) -> None:
        super().__init__(reason)
        self.kind: ErrorKind = kind
        self.reason = reason
