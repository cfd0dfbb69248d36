"""Export and import files: an export streamed to disk a chunk at a time, an import streamed up from a path or
a binary file, and an import job's end read as its answer or its refusal."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Union

from ._errors import STATUS_OF_CODE, error_for
from ._types import ImportAnswer, ImportJob

Target = Union[str, "os.PathLike[str]", IO[bytes]]
Source = Union[str, "os.PathLike[str]", IO[bytes]]
CHUNK = 1024 * 1024  # bytes read or written at a time: the file is never held in memory whole
GZIP_MAGIC = b"\x1f\x8b"
NDJSON, GZIP = "application/x-ndjson", "application/gzip"


@contextlib.contextmanager
def writer(to: Target) -> Iterator[Callable[[bytes], Any]]:
    """A function writing chunks into `to`. A path is written beside itself and renamed into place once the
    export has ended, so a broken export never leaves half a file under the name asked for."""
    if hasattr(to, "write"):
        yield to.write
        return
    target = Path(to)
    handle, partial = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent or ".")
    try:
        with os.fdopen(handle, "wb") as file:
            yield file.write
        os.replace(partial, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)
        raise


def parsed_lines(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        if line.strip():
            yield json.loads(line)


class Upload:
    """An import's body: read a chunk at a time from a path (opened afresh for each try) or a binary file
    (sent again only when it can seek back to where it started)."""

    def __init__(self, source: Source, *, asynchronous: bool = False):
        self.source = source
        self.asynchronous = asynchronous
        self.path = None if hasattr(source, "read") else Path(source)
        file: Any = source
        self.start = file.tell() if self.path is None and _seekable(file) else None
        self.again = self.path is not None or self.start is not None

    def _first_bytes(self) -> bytes:
        if self.path is not None:
            with self.path.open("rb") as file:
                return file.read(2)
        if self.start is None:
            return b""  # a stream that cannot be peeked at: the service tells gzip by its first bytes anyway
        source: Any = self.source
        first = source.read(2)
        source.seek(self.start)
        return first

    def _size(self) -> int | None:
        if self.path is not None:
            return self.path.stat().st_size
        if self.start is None:
            return None
        file: Any = self.source
        end = file.seek(0, os.SEEK_END)
        file.seek(self.start)
        return end - self.start

    def request(self) -> dict[str, Any]:
        """httpx's arguments: the headers (the type, and the length when known, so the body streams
        without chunked encoding), and the body once."""
        headers = {"Content-Type": GZIP if self._first_bytes() == GZIP_MAGIC else NDJSON}
        size = self._size()
        if size is not None:
            headers["Content-Length"] = str(size)
        return {"headers": headers, "content": self.rewind()}

    def rewind(self) -> Iterator[bytes] | AsyncIterator[bytes]:
        """The body from its start, as an iterator of chunks (async for the async client)."""
        chunks = self._chunks()
        return _async(chunks) if self.asynchronous else chunks

    def _chunks(self) -> Iterator[bytes]:
        if self.path is not None:
            with self.path.open("rb") as file:
                yield from iter(lambda: file.read(CHUNK), b"")
            return
        source: Any = self.source
        if self.start is not None:
            source.seek(self.start)
        yield from iter(lambda: source.read(CHUNK), b"")


async def _async(chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


def _seekable(file: Any) -> bool:
    try:
        return bool(file.seekable())
    except (AttributeError, OSError):
        return False


def job_answer(job: ImportJob) -> ImportAnswer:
    """An ended import job's answer; its refusal or failure raised as the import would have raised it."""
    if job["state"] == "done":
        return job["answer"]
    body = job.get("error") or {"error": "import_failed", "message": "The import failed."}
    status = 503 if job["state"] == "failed" else STATUS_OF_CODE.get(body.get("error", ""), 400)
    raise error_for(status, body)


def waited_enough(wait: bool | float, waited: float) -> bool:
    """Whether to stop asking after a running import: never with True, at once with False, else after that
    many seconds."""
    if wait is True:
        return False
    if wait is False:
        return True
    return waited >= wait
