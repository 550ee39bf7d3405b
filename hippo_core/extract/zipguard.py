"""Checks on an Office/HWPX zip before any reader opens it: a zip bomb is refused from its directory.

CPython's zipfile stops each member at its declared size (a member that lies fails its CRC), so the
declared sizes in the central directory bound what a reader can inflate, but only for stored and
deflated members: bzip2 and lzma members are inflated whole before that cut, so they are refused.
"""

from __future__ import annotations

import io
import zipfile

from hippo_core.extract.model import ExtractionError, ExtractLimits

_BOUNDED_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)


def open_zip(data: bytes, what: str, limits: ExtractLimits, required: tuple[str, ...]) -> zipfile.ZipFile:
    """Open `data` as a zip after checking member count, uncompressed size, methods and `required` parts."""
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
    return archive
