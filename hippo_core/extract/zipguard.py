"""Checks on an Office/HWPX zip before any reader opens it: a zip bomb is refused from its directory.

CPython's zipfile stops each member at its declared size (a member that lies fails its CRC), so the
declared sizes in the central directory bound what a reader can inflate, but only for stored and
deflated members: bzip2 and lzma members are inflated whole before that cut, so they are refused.

A package under those bounds can still cost gigabytes: python-docx, python-pptx and ElementTree build a
tree of every XML part, ~150-250 bytes per element, so 60 MiB of `<w:p/>` (92 KB zipped) took 1.4 GB.
So each XML part a reader builds a tree of is bounded twice before it does: its unzipped size
(`max_xml_part_bytes`, from the directory) and its elements (`max_xml_elements` over all parts, counted
by streaming the part and counting its start tags, which holds no tree: memory stays flat however the XML
expands). A part with a DOCTYPE is refused in the same pass: Office and OWPML never have one, and
entities are how XML bombs get in.
"""

from __future__ import annotations

import io
import zipfile

from hippo_core.extract.model import ExtractionError, ExtractLimits

_BOUNDED_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
_XML_SUFFIXES = (".xml", ".rels")
_CHUNK = 1024 * 1024


def _count_elements(archive: zipfile.ZipFile, name: str, budget: int, what: str) -> int:
    """Start tags of one XML part, streamed in 1 MiB pieces (no tree, no per-element callback: bytes
    counts at C speed); stops as soon as `budget` is passed. Every `<` opens a tag, except `</`, `<?`
    and `<!` (escaped text never holds one); a tag split between two pieces counts once too often at
    most, which only errs on the safe side."""
    count = 0
    tail = b""
    with archive.open(name) as part:
        while chunk := part.read(_CHUNK):
            if b"<!DOCTYPE" in tail + chunk[:16] or b"<!DOCTYPE" in chunk:
                raise ExtractionError("corrupt", f"{what} part {name} has a DOCTYPE (never in {what})")
            count += chunk.count(b"<") - chunk.count(b"</") - chunk.count(b"<?") - chunk.count(b"<!")
            if count > budget:
                break
            tail = chunk[-16:]
    return count


def check_xml_parts(
    archive: zipfile.ZipFile, what: str, limits: ExtractLimits, streamed: tuple[str, ...] = ()
) -> None:
    """Refuse (`xml_too_large`) a package whose XML parts a reader would build trees of are over the
    limits; parts whose names start with one of `streamed` are read by a streaming reader (openpyxl's
    read-only sheets) and only their size is checked."""
    budget = limits.max_xml_elements
    for info in archive.infolist():
        if not info.filename.lower().endswith(_XML_SUFFIXES):
            continue
        if info.file_size > limits.max_xml_part_bytes:
            raise ExtractionError(
                "xml_too_large",
                f"{what} part {info.filename} unzips to {info.file_size:,} bytes of XML; the limit is "
                f"{limits.max_xml_part_bytes:,}",
            )
        if info.filename.startswith(streamed):
            continue
        budget -= _count_elements(archive, info.filename, budget, what)
        if budget < 0:
            raise ExtractionError(
                "xml_too_large",
                f"{what} XML holds more than {limits.max_xml_elements:,} elements (at {info.filename}); "
                "reading it would take gigabytes",
            )


def open_zip(
    data: bytes, what: str, limits: ExtractLimits, required: tuple[str, ...], streamed: tuple[str, ...] = ()
) -> zipfile.ZipFile:
    """Open `data` as a zip after checking member count, uncompressed size, methods, `required` parts
    and the XML parts' size and elements (`check_xml_parts`)."""
    if not data.startswith(b"PK\x03\x04"):
        raise ExtractionError("corrupt", f"not a {what} file (it is not a zip package)")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ExtractionError("corrupt", f"{what} file is damaged or truncated ({exc})") from None
    if len(infos) > limits.max_zip_members:
        raise ExtractionError(
            "zip_bomb", f"{what} package has {len(infos)} members; the limit is {limits.max_zip_members}"
        )
    total = sum(info.file_size for info in infos)  # directory entries too: a "dir/" can hold bytes
    if total > limits.max_unzipped_bytes:
        raise ExtractionError(
            "zip_bomb",
            f"{what} package would unpack to {total:,} bytes; the limit is {limits.max_unzipped_bytes:,}",
        )
    odd = sorted({info.compress_type for info in infos} - set(_BOUNDED_METHODS))
    if odd:
        raise ExtractionError(
            "corrupt", f"{what} package uses a compression method Office never writes ({odd})"
        )
    names = {info.filename for info in infos}
    missing = [name for name in required if name not in names]
    if missing:
        raise ExtractionError("corrupt", f"not a {what} file (the package has no {missing[0]})")
    try:
        check_xml_parts(archive, what, limits, streamed)
    except (zipfile.BadZipFile, OSError, EOFError, RuntimeError) as exc:  # a part that lies about its CRC
        raise ExtractionError("corrupt", f"{what} file is damaged or truncated ({exc})") from None
    return archive
