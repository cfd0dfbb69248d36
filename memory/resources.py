"""The end user's memory as MCP resources: addressed files a person can @-mention, read-only.

Each resource is a file the tools already read, under a scheme of our own that maps 1:1 onto their paths:
twin-memory://index.md, twin-memory://subjects/<slug>.md, twin-memory://passages/<source>/<kind>/<thread>/
p_0001.md. A thread is a directory, not a file, so it is no resource. A file reads exactly as memory_read
renders it (stored text stays data: the same escaping and fences). One definition serves both MCP eras, the
/v1/mcp and stdio servers alike (mcp_server/primitives.py), the console and the README.
"""

import base64
import binascii
import re
from dataclasses import dataclass

from .errors import CannotAnswer, InvalidArguments
from .limits import COMPLETION_VALUES_MAX, NAME_MAX, RESOURCES_PAGE, RESOURCES_PASSAGES_MAX, RESOURCES_SUBJECTS_MAX
from .paths import INDEX_PATH, subject_path
from .query.browse import memory_read
from .secrets.detect import find_secret
from .selectors import Memory

SCHEME = "twin-memory://"
MIME_TYPE = "text/markdown"
PASSAGES, SUBJECTS = "passages/", "subjects/"
URI_MAX = len(SCHEME) + NAME_MAX
# A URI is sent back in an error only when it is plainly a URI: RFC 3986's characters, one line, no longer
# than a path may be, and holding no secret. Anything else is the caller's text (markup, a secret, kilobytes
# of it) and is named by its field, never echoed.
_URI_SHAPE = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]" + f"{{1,{URI_MAX}}}")


@dataclass(frozen=True)
class Template:
    """A resource template: the URI of one kind of file, with the argument a client completes."""

    name: str
    title: str
    description: str
    uri_template: str  # RFC 6570
    argument: str
    directory: str  # the paths it names start with this

    def entry(self) -> dict:
        """The template as resources/templates/list sends it."""
        return {
            "uriTemplate": self.uri_template,
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "mimeType": MIME_TYPE,
        }


TEMPLATES = (
    Template(
        name="passage",
        title="A passage of memory",
        description="One passage file, by its path under passages/, such as memory/notes/th_8b5e5d4c8946d815/"
        "p_0001.md: a hit's path without the passages/ in front. Completes from the newest.",
        uri_template=SCHEME + PASSAGES + "{+path}",
        argument="path",
        directory=PASSAGES,
    ),
    Template(
        name="subject",
        title="A subject's facts",
        description="What memory records about one person, place or thing: current facts, then each "
        "attribute's history. Completes from the subjects' names.",
        uri_template=SCHEME + SUBJECTS + "{subject}.md",
        argument="subject",
        directory=SUBJECTS,
    ),
)
TEMPLATES_BY_URI = {template.uri_template: template for template in TEMPLATES}


def uri_of(path: str) -> str:
    """The resource URI of a memory path."""
    return SCHEME + path


def shown_uri(uri) -> str | None:
    """`uri` as an error may repeat it, or None when it must not be repeated (see _URI_SHAPE)."""
    if not isinstance(uri, str) or not _URI_SHAPE.fullmatch(uri) or find_secret(uri) is not None:
        return None
    return uri


def _entry(path: str, title: str | None = None) -> dict:
    entry = {"uri": uri_of(path), "name": path, "mimeType": MIME_TYPE}
    if title:
        entry["title"] = title
    return entry


def resources(memory: Memory) -> list[dict]:
    """Every resource resources/list names, in order: index.md, the subject files by name, then the newest
    passages, newest first; none for an empty memory."""
    if memory.is_empty():
        return []
    names = sorted(memory.subjects().values(), key=str.casefold)[:RESOURCES_SUBJECTS_MAX]
    newest = memory.passages().order_by("-at", "-seq").values_list("path", flat=True)[:RESOURCES_PASSAGES_MAX]
    return [
        _entry(INDEX_PATH, "The written index"),
        *(_entry(subject_path(name), name) for name in names),
        *(_entry(path) for path in newest),
    ]


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"resources:{offset}".encode()).decode("ascii")


def _offset(cursor) -> int:
    """Where a page starts: 0 without a cursor, else the offset one of ours holds; InvalidArguments else."""
    if cursor is None:
        return 0
    try:
        kind, _, offset = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii").partition(":")
        if kind == "resources" and offset.isdigit():
            return int(offset)
    except (AttributeError, UnicodeError, binascii.Error, ValueError):
        pass
    raise InvalidArguments("cursor: not a cursor resources/list gave.", field="cursor", bound="a nextCursor")


def resource_page(*, memory: Memory, cursor=None) -> tuple[list[dict], str | None]:
    """One page of resources/list from `cursor` (an opaque offset), and the cursor of the next page, if any."""
    start = _offset(cursor)
    listed = resources(memory)
    end = start + RESOURCES_PAGE
    return listed[start:end], (_cursor(end) if end < len(listed) else None)


def resource_read(*, memory: Memory, uri) -> dict:
    """The file a URI names, as resources/read sends it: memory_read's text as markdown. CannotAnswer
    not_found when it names nothing (another scheme, a directory, a file this memory does not hold)."""
    path = uri[len(SCHEME) :] if isinstance(uri, str) and uri.startswith(SCHEME) else None
    if not path or path != path.strip().lstrip("/"):
        raise CannotAnswer("not_found", "Resource not found")
    try:
        text = memory_read(memory=memory, path=path)["text"]
    except CannotAnswer:
        raise CannotAnswer("not_found", "Resource not found") from None
    return {"uri": uri, "mimeType": MIME_TYPE, "text": text}


def resource_complete(*, memory: Memory, template: Template, value: str) -> tuple[list[str], int]:
    """What completes `template`'s argument from `value`: at most COMPLETION_VALUES_MAX values, and how many
    there are. Passage paths start with the value, newest first; subjects' slugs start with it (or their
    names do), by name."""
    if memory.is_empty():
        return [], 0
    if template.directory == PASSAGES:
        found = memory.passages().filter(path__prefix=PASSAGES + value)
        paths = found.order_by("-at", "-seq").values_list("path", flat=True)[:COMPLETION_VALUES_MAX]
        return [path.removeprefix(PASSAGES) for path in paths], found.count()
    folded = value.casefold()
    slugs = sorted(
        {
            subject_path(name).removeprefix(SUBJECTS).removesuffix(".md")
            for name in memory.subjects().values()
            if name.casefold().startswith(folded) or subject_path(name).removeprefix(SUBJECTS).startswith(folded)
        }
    )
    return slugs[:COMPLETION_VALUES_MAX], len(slugs)
