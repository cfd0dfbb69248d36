"""Reading an export file: plain or gzipped (told by its magic bytes, not its name), line by line, each
line bounded, the whole bounded, so a file of any size is read in little memory and a bomb is refused."""

import gzip
import zlib
from collections.abc import Iterator
from typing import BinaryIO

from twin.json_limits import InvalidJson, loads

from ..limits import IMPORT_LINE_MAX_BYTES, IMPORT_MAX_BYTES
from .format import InvalidImport

GZIP_MAGIC = b"\x1f\x8b"


def _opened(file: BinaryIO) -> BinaryIO:
    """The file from its start, decompressed when it is gzip."""
    file.seek(0)
    magic = file.read(len(GZIP_MAGIC))
    file.seek(0)
    return gzip.GzipFile(fileobj=file, mode="rb") if magic == GZIP_MAGIC else file


def lines(file: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """(number, bytes) of every line that is not blank, numbered from 1 as an editor numbers them.

    InvalidImport for a line longer than IMPORT_LINE_MAX_BYTES, a file (once decompressed) longer than
    IMPORT_MAX_BYTES, or a gzip stream that is corrupt or cut short. Each call reads from the start again.
    """
    stream, number, size = _opened(file), 0, 0
    while True:
        try:
            line = stream.readline(IMPORT_LINE_MAX_BYTES + 1)
        except (OSError, EOFError, zlib.error):  # gzip.BadGzipFile is an OSError
            raise InvalidImport(number + 1, "body", "the gzip stream is corrupt or cut short") from None
        if not line:
            return
        number += 1
        size += len(line)
        if size > IMPORT_MAX_BYTES:
            raise InvalidImport(
                number,
                "body",
                f"the file holds more than {IMPORT_MAX_BYTES:,} bytes (once decompressed)",
                bound=IMPORT_MAX_BYTES,
            )
        if len(line.rstrip(b"\r\n")) > IMPORT_LINE_MAX_BYTES:
            raise InvalidImport(
                number, "line", f"longer than {IMPORT_LINE_MAX_BYTES:,} bytes", bound=IMPORT_LINE_MAX_BYTES
            )
        if line.strip():
            yield number, line


def parsed(number: int, line: bytes):
    """The JSON value of one line, or InvalidImport naming the line (never quoting it)."""
    try:
        return loads(line)
    except InvalidJson as bad:
        raise InvalidImport(number, "line", str(bad)) from None
