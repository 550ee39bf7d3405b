"""HTML → Markdown: parsed by lxml (libxml2's HTML parser: C, linear, depth-limited), then walked here.

Headings stay headings, lists become `- ` items, tables Markdown tables; scripts, styles and other
non-text elements are dropped. The text is decoded here (BOM, UTF-8, the declared charset, then
CP949, the common legacy Korean encoding) so lxml never guesses Latin-1 for Korean.
"""

from __future__ import annotations

import codecs

from hippo_core.extract import markdown as md
from hippo_core.extract.model import Extraction, ExtractionError, ExtractLimits

_SKIP = {"script", "style", "noscript", "template", "iframe", "svg", "math", "object", "canvas", "head", "select"}  # fmt: skip
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCKS = {
    *_HEADINGS, "p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "blockquote",
    "li", "ul", "ol", "dl", "dt", "dd", "pre", "figure", "figcaption", "address", "form", "fieldset",
    "details", "summary", "hr", "body", "html", "caption",
}  # fmt: skip
_MAX_DEPTH = 200


def _declared_charset(head: bytes) -> str | None:
    """The charset named in the first bytes (`<meta charset=...>` or a content-type meta), if known."""
    lowered = head.lower()
    at = lowered.find(b"charset=")
    if at < 0:
        return None
    name = lowered[at + 8 : at + 48].lstrip(b"\"' ")
    end = 0
    while end < len(name) and (chr(name[end]).isalnum() or name[end] in b"-_:."):
        end += 1
    try:
        return codecs.lookup(name[:end].decode("ascii")).name if end else None
    except LookupError:
        return None


def decode_html(data: bytes) -> tuple[str, list[str]]:
    """HTML bytes as text, and a warning when characters had to be replaced."""
    for bom, encoding in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return data.decode(encoding, errors="replace"), []
    if b"\x00" in data:
        raise ExtractionError("corrupt", "HTML file holds NUL bytes (binary data, not a web page)")
    declared = _declared_charset(data[:4096])
    for encoding in dict.fromkeys(e for e in (declared, "utf-8", "cp949") if e):
        try:
            return data.decode(encoding), []
        except UnicodeDecodeError:
            continue
    return data.decode(declared or "utf-8", errors="replace"), ["undecodable bytes were replaced"]


class _Walker:
    def __init__(self, limits: ExtractLimits) -> None:
        self.limits = limits
        self.blocks: list[str] = []
        self.inline: list[str] = []
        self.size = 0

    def flush(self, prefix: str = "", level: int = 0) -> None:
        text = " ".join("".join(self.inline).split())
        self.inline = []
        if not text:
            return
        if level:
            block = md.heading(level, text)
        elif prefix:
            block = prefix + md.safe_line(text)
        else:
            block = md.paragraph(text)
        self.blocks.append(block)
        self.size += len(block)
        if self.size > self.limits.max_chars:
            raise ExtractionError("too_large", f"HTML text is over {self.limits.max_chars:,} characters")

    def walk(self, element, depth: int = 0) -> None:
        tag = element.tag.lower() if isinstance(element.tag, str) else ""
        if tag in _SKIP or not tag or depth > _MAX_DEPTH:  # comments and processing instructions too
            self.inline.append(element.tail or "")
            return
        if tag == "table":
            self.flush()
            self.table(element)
        elif tag == "pre":
            self.flush()
            self.blocks.append(md.paragraph(element.text_content()))
        elif tag in _BLOCKS:
            self.flush()
            self.inline.append(element.text or "")
            for child in element:
                self.walk(child, depth + 1)
            self.flush(prefix="- " if tag == "li" else "", level=_HEADINGS.get(tag, 0))
        else:
            if tag == "br":
                self.inline.append(" ")
            self.inline.append(element.text or "")
            for child in element:
                self.walk(child, depth + 1)
        self.inline.append(element.tail or "")

    def table(self, table) -> None:
        rows = []
        for tr in table.iter("tr"):
            rows.append(
                [cell.text_content() for cell in tr if isinstance(cell.tag, str) and cell.tag in ("td", "th")]
            )
        self.blocks.append(md.table(rows))


def read_html(data: bytes, limits: ExtractLimits) -> Extraction:
    import lxml.html

    text, warnings = decode_html(data)
    if text.lstrip().startswith("<?xml"):  # lxml refuses a str that declares its own encoding
        text = text.lstrip().split("?>", 1)[-1]
    if not text.strip():
        raise ExtractionError("empty", "HTML file is empty")
    try:
        root = lxml.html.document_fromstring(text)
    except Exception as exc:  # lxml.etree.ParserError and friends: nothing usable in the file
        raise ExtractionError("corrupt", f"HTML could not be parsed ({exc})") from None
    title_el = root.find(".//title")
    title = " ".join(title_el.text_content().split()) if title_el is not None else ""
    walker = _Walker(limits)
    walker.walk(root)
    walker.flush()
    return Extraction(
        format="html", markdown=md.join_blocks(walker.blocks), title=title or None, warnings=warnings
    )
