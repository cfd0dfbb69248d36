"""An import's file on its way to its job: the body written to the spool directory (var/imports), a megabyte
at a time and never more than IMPORT_MAX_BYTES of it. The web processes and the import worker share that
directory (one machine with `make run`; a shared volume where they run apart). The job deletes its file when
it ends; a file anywhere else (importmemory's own) is never deleted."""

import secrets
from pathlib import Path

from django.conf import settings

from accounts.errors import ApiError

from ..limits import IMPORT_MAX_BYTES

BODY_READ_BYTES = 1024 * 1024  # how much of an import's body is held in memory at a time on its way to disk
SPOOL_FOLDER = "imports"


class BodyTooLarge(ApiError):
    """An import's body past IMPORT_MAX_BYTES, found while spooling it (the middleware refuses a declared
    Content-Length past it before anything is read)."""

    def __init__(self):
        super().__init__(
            413,
            "too_large",
            f"The body is more than {IMPORT_MAX_BYTES:,} bytes; at most {IMPORT_MAX_BYTES:,}.",
            bound=IMPORT_MAX_BYTES,
        )


def spool_dir() -> Path:
    return settings.VAR_DIR / SPOOL_FOLDER


def spool(stream) -> Path:
    """`stream` (a request body, an upload: anything with read(n)) written to a new file of the spool
    directory; BodyTooLarge past IMPORT_MAX_BYTES, and then nothing of it is kept."""
    folder = spool_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{secrets.token_hex(16)}.upload"
    try:
        with open(path, "xb") as file:
            size = 0
            while stream is not None and (chunk := stream.read(BODY_READ_BYTES)):
                size += len(chunk)
                if size > IMPORT_MAX_BYTES:
                    raise BodyTooLarge()
                file.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path


def discard(path: str) -> None:
    """Delete a spooled file; a file outside the spool directory is left alone."""
    file = Path(path)
    if file.parent.resolve() == spool_dir().resolve():
        file.unlink(missing_ok=True)
