"""Reading an export file: plain or gzipped (told by its magic bytes, not its name), line by line, each
line bounded, the whole bounded, so a file of any size is read in little memory and a bomb is refused.

The file is read a chunk at a time and cut into lines by the C code of bytes and re, never a Python step per
line: a run of blank lines (whitespace only) costs what scanning its bytes costs, so a gzip of millions of
newlines is read, counted and refused in seconds. Its bytes count all the same: towards IMPORT_MAX_BYTES
and, for a gzip, towards IMPORT_RATIO_MAX, checked as each chunk is decompressed.
"""

import gzip
import io
import re
import zlib
from collections.abc import Iterator
from typing import BinaryIO, cast

from twin.json_limits import InvalidJson, loads

from ..limits import IMPORT_LINE_MAX_BYTES, IMPORT_MAX_BYTES, IMPORT_RATIO_FREE_BYTES, IMPORT_RATIO_MAX
from .format import InvalidImport

GZIP_MAGIC = b"\x1f\x8b"
CHUNK_BYTES = 1024 * 1024  # read (and, for a gzip, decompressed) at a time
# A byte that makes a line not blank: anything but the whitespace bytes.strip() removes.
_CONTENT = re.compile(rb"[^ \t\n\r\x0b\x0c]")


def _opened(file: BinaryIO) -> tuple[io.BufferedIOBase, bool]:
    """The file from its start, decompressed when it is gzip; and whether it is. A file opened to read bytes
    is buffered (open's, a temporary file's), so it reads a step at a time (read1) as a gzip does."""
    file.seek(0)
    magic = file.read(len(GZIP_MAGIC))
    file.seek(0)
    if magic == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=file, mode="rb"), True
    return cast(io.BufferedIOBase, file), False


class _Chunks:
    """The file's bytes a chunk at a time (decompressed), refused past the bounds on the whole."""

    def __init__(self, file: BinaryIO):
        self.raw = file
        self.stream, self.gzipped = _opened(file)
        self.size = 0

    def next(self, line: int) -> bytes:
        """The next chunk (b"" at the end); `line` is the line it starts in, named by a refusal. A gzip's
        chunk is one step of its decoder (read1), so the lines before a corrupt or cut step are read first."""
        try:
            chunk = self.stream.read1(CHUNK_BYTES)
        except (OSError, EOFError, zlib.error):  # gzip.BadGzipFile is an OSError
            raise InvalidImport(line, "body", "the gzip stream is corrupt or cut short") from None
        self.size += len(chunk)
        if self.size > IMPORT_MAX_BYTES:
            raise InvalidImport(
                line,
                "body",
                f"the file holds more than {IMPORT_MAX_BYTES:,} bytes (once decompressed)",
                bound=IMPORT_MAX_BYTES,
            )
        if self.gzipped and self.size > IMPORT_RATIO_FREE_BYTES and self.size > IMPORT_RATIO_MAX * self.raw.tell():
            raise InvalidImport(
                line,
                "body",
                f"the gzip expands more than {IMPORT_RATIO_MAX} times (past its first "
                f"{IMPORT_RATIO_FREE_BYTES:,} bytes): an export never does",
                bound=IMPORT_RATIO_MAX,
            )
        return chunk


def lines(file: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """(number, bytes) of every line that is not blank, numbered from 1 as an editor numbers them, without
    its leading whitespace.

    InvalidImport for a line longer than IMPORT_LINE_MAX_BYTES, a file (once decompressed) longer than
    IMPORT_MAX_BYTES, a gzip expanding more than IMPORT_RATIO_MAX times, or a gzip stream that is corrupt or
    cut short. Each call reads from the start again.
    """
    chunks = _Chunks(file)
    before = 0  # lines ended before the current one
    parts: list[bytes] = []  # the current line's bytes so far, from its first that is not blank
    length = 0
    while chunk := chunks.next(before + 1):
        if not parts and chunk.isspace():  # a chunk of blank lines (isspace: the bytes _CONTENT is not)
            before += chunk.count(b"\n")
            continue
        at = 0
        while at < len(chunk):
            if not parts:  # between lines, or in a blank one: skip to the next byte that is not blank
                found = _CONTENT.search(chunk, at)
                end = found.start() if found else len(chunk)
                before += chunk.count(b"\n", at, end)
                if found is None:
                    break
                at = end
            ended = chunk.find(b"\n", at)
            part = chunk[at:] if ended < 0 else chunk[at:ended]
            parts.append(part)
            length += len(part)
            if length > IMPORT_LINE_MAX_BYTES + 1:  # + 1: a CR before the LF
                raise InvalidImport(
                    before + 1, "line", f"longer than {IMPORT_LINE_MAX_BYTES:,} bytes", bound=IMPORT_LINE_MAX_BYTES
                )
            if ended < 0:
                break
            before += 1
            yield _line(before, parts)
            parts, length, at = [], 0, ended + 1
    if parts:
        yield _line(before + 1, parts)


def _line(number: int, parts: list[bytes]) -> tuple[int, bytes]:
    line = b"".join(parts).rstrip(b"\r")
    if len(line) > IMPORT_LINE_MAX_BYTES:
        raise InvalidImport(number, "line", f"longer than {IMPORT_LINE_MAX_BYTES:,} bytes", bound=IMPORT_LINE_MAX_BYTES)
    return number, line


def parsed(number: int, line: bytes):
    """The JSON value of one line, or InvalidImport naming the line (never quoting it)."""
    try:
        return loads(line)
    except InvalidJson as bad:
        raise InvalidImport(number, "line", str(bad)) from None
