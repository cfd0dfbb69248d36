"""The addressed tools: read, ls, around, latest, overview, grep. Ordered or exact, never ranked."""

from datetime import datetime
from typing import Any

from django.db.models import F, Max, Min, Sum

from ..errors import CannotAnswer, echoed
from ..markdown import fenced, inline
from ..models import Item, Passage, Thread
from ..paths import INDEX_PATH, PLURAL, iso, parse_passage_id, passage_id, subject_path
from ..selectors import Memory
from . import history

CHILDREN_MAX = 1_000
PREVIEW_CHARS = 80  # of a passage listed in its thread's directory
MATCH_CONTEXT = 80  # characters either side of a grep match


def passage_json(p: Passage, **extra) -> dict:
    """One passage as every tool shows it: address, date, who, text, and the items it came from."""
    out: dict[str, Any] = {"path": p.path, "passage_id": passage_id(p.thread.tid, p.seq), "at": iso(p.at)}
    for name in ("author", "role", "title"):
        if getattr(p, name):
            out[name] = getattr(p, name)
    if p.expires:
        out["expires"] = iso(p.expires)
    out.update(extra)
    out["text"] = p.text
    out["item_ids"] = list(p.item_ids)
    return out


def render_passage(p: Passage) -> str:
    """A passage file: its address, date, author, role, title and item ids, then its text, fenced."""
    lines = [f"# {passage_id(p.thread.tid, p.seq)}", "", f"- at: {iso(p.at)}"]
    for name in ("author", "role", "title", "about"):
        if getattr(p, name):
            lines.append(f"- {name}: {inline(getattr(p, name))}")
    if p.expires:
        lines.append(f"- expires: {iso(p.expires)}")
    lines.append(f"- items: {inline(', '.join(p.item_ids))}")
    # The text is stored data, quoted: fenced, it cannot add a heading or a list item of ours.
    return "\n".join(lines) + "\n\n" + fenced(p.text) + "\n"


def _dir(path: str) -> str:
    path = path.strip().lstrip("/")
    return path if path == "" or path.endswith("/") else path + "/"


_SINGULAR = {plural: kind for kind, plural in PLURAL.items()}


def _children(memory: Memory, directory: str) -> list[dict] | None:
    """The entries of a directory, or None when it does not exist."""
    parts = [p for p in directory.split("/") if p]
    if not parts:
        top = [{"name": INDEX_PATH, "path": INDEX_PATH}, {"name": "passages/", "path": "passages/"}]
        if memory.subjects():
            top.append({"name": "subjects/", "path": "subjects/"})
        return top
    if parts == ["subjects"]:
        files = sorted((subject_path(name), name) for name in memory.subjects().values())
        return [{"name": path.split("/", 1)[1], "path": path, "subject": name} for path, name in files] or None
    if parts[0] != "passages" or len(parts) > 4:
        return None
    # Directories are counted from the threads' kept counts (Memory.recount_threads), files read as passages.
    held = memory.held_threads()
    if len(parts) == 1:
        rows = held.values("source").annotate(n=Sum("passage_count")).order_by("source")
        return [{"name": f"{r['source']}/", "path": f"passages/{r['source']}/", "passages": r["n"]} for r in rows]
    held = held.filter(source=parts[1])
    if len(parts) == 2:
        kinds = held.values("kind").annotate(n=Sum("passage_count")).order_by("kind")
        return [
            {"name": f"{PLURAL[r['kind']]}/", "path": f"{directory}{PLURAL[r['kind']]}/", "passages": r["n"]}
            for r in kinds
        ] or None
    if len(parts) == 3:
        out = []
        for thread in held.filter(kind=_SINGULAR.get(parts[2], "")).order_by("-last_at", "tid")[:CHILDREN_MAX]:
            entry = {
                "name": f"{thread.tid}/",
                "path": f"{directory}{thread.tid}/",
                "passages": thread.passage_count,
                "first_at": iso(thread.first_at),
                "last_at": iso(thread.last_at),
            }
            if thread.title:
                entry["title"] = thread.title
            out.append(entry)
        return out or None
    passages = memory.passages().filter(path__prefix=directory)
    listed = passages.order_by("seq")[:CHILDREN_MAX]
    return [
        {
            "name": p.path.rsplit("/", 1)[1],
            "path": p.path,
            "at": iso(p.at),
            "preview": " ".join(p.text.split())[:PREVIEW_CHARS],
        }
        for p in listed
    ] or None


def memory_ls(*, memory: Memory, path: str = "") -> dict:
    """The children of one directory; directories end in /."""
    memory.must_hold_items()
    directory = _dir(path)
    children = _children(memory, directory)
    if children is None:
        parent = directory.rstrip("/").rsplit("/", 1)[0] + "/" if "/" in directory.rstrip("/") else ""
        siblings = _children(memory, parent)
        while siblings is None:  # the top directory always exists, so this ends there at the latest
            parent = parent.rstrip("/").rsplit("/", 1)[0] + "/" if "/" in parent.rstrip("/") else ""
            siblings = _children(memory, parent)
        raise CannotAnswer(
            "not_found",
            f"No directory {echoed(directory)} in this memory.",
            path=directory,
            nearest=parent,
            children=[c["name"] for c in siblings],
        )
    return {"path": directory, "children": children}


def memory_read(*, memory: Memory, path: str) -> dict:
    """One file by exact path; a missing path answers with its siblings."""
    memory.must_hold_items()
    path = path.strip().lstrip("/")
    if path == INDEX_PATH:
        return {"path": path, "text": memory.written_index()}
    if path.startswith("subjects/"):
        for key, name in memory.subjects().items():
            if subject_path(name) == path:
                return {"path": path, "subject": name, "text": history.render_subject(memory, key, name)}
    passage = memory.passages().filter(path=path).first()
    if passage:
        return {
            "path": path,
            "passage_id": passage_id(passage.thread.tid, passage.seq),
            "at": iso(passage.at),
            "item_ids": list(passage.item_ids),
            "text": render_passage(passage),
        }
    parent = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
    children = _children(memory, _dir(path))
    if children is not None:
        raise CannotAnswer(
            "is_a_directory",
            f"{echoed(path)} is a directory; memory_ls lists it.",
            path=path,
            children=[c["name"] for c in children],
        )
    try:
        siblings = memory_ls(memory=memory, path=parent)["children"]
        where = parent
    except CannotAnswer as missing:
        siblings, where = [{"name": n} for n in missing.details["children"]], missing.details["nearest"]
    raise CannotAnswer(
        "not_found",
        f"No file {echoed(path)} in this memory.",
        path=path,
        directory=where,
        siblings=[c["name"] for c in siblings],
    )


def _passage(memory: Memory, pid: str) -> Passage:
    parsed = parse_passage_id(pid)
    if parsed is None:
        raise CannotAnswer("not_found", f"{echoed(pid)} is not a passage id (like th_8b5e5d4c8946d815/p_0001).")
    tid, seq = parsed
    found = memory.passages().filter(thread__tid=tid, seq=seq).first()
    if found is None:
        thread = memory.passages().filter(thread__tid=tid).aggregate(first=Min("seq"), last=Max("seq"))
        hint = (
            f" Thread {tid} has p_{thread['first']:04d} to p_{thread['last']:04d}."
            if thread["first"]
            else f" There is no thread {tid}."
        )
        raise CannotAnswer("not_found", f"No passage {pid}.{hint}", passage_id=pid)
    return found


def memory_around(*, memory: Memory, passage_id: str, width: int) -> dict:
    """The passages either side of one in its own thread, in order (the passage itself marked)."""
    memory.must_hold_items()
    center = _passage(memory, passage_id)
    thread = memory.passages().filter(thread=center.thread)
    before = list(thread.filter(seq__lt=center.seq).order_by("-seq")[:width])[::-1]
    after = list(thread.filter(seq__gt=center.seq).order_by("seq")[:width])
    passages = (
        [passage_json(p) for p in before] + [passage_json(center, center=True)] + [passage_json(p) for p in after]
    )
    return {"passage_id": passage_id, "thread": center.thread.tid, "passages": passages}


def _places(memory: Memory) -> list[str]:
    held = memory.held_threads()
    sources = held.values_list("source", flat=True).distinct()
    kinds = held.values_list("kind", flat=True).distinct()
    return sorted(set(sources)) + sorted(PLURAL[k] for k in set(kinds))


def _dated(passages, after: datetime | None, before: datetime | None):
    if after:
        passages = passages.filter(at__gte=after)
    if before:
        passages = passages.filter(at__lt=before)
    return passages


def memory_latest(
    *, memory: Memory, k: int, place: str = "", after: datetime | None = None, before: datetime | None = None
) -> dict:
    """The most recent passages, newest first, optionally in one place and a date window."""
    memory.must_hold_items()
    passages = memory.passages()
    place = place.strip().strip("/")
    if place:
        kind = {plural: kind for kind, plural in PLURAL.items()}.get(place)
        passages = passages.filter(kind=kind) if kind else passages.filter(thread__source=place)
        if not passages.exists():
            raise CannotAnswer(
                "empty_place", f"Nothing is in place {echoed(place)}.", place=place, places=_places(memory)
            )
    rows = _dated(passages, after, before).order_by("-at", "-seq")[:k]
    return {"passages": [passage_json(p) for p in rows]}


def memory_overview(*, memory: Memory) -> dict:
    """What this memory holds (`overview`); no_memory when it holds nothing."""
    memory.must_hold_items()
    return overview(memory)


def overview(memory: Memory) -> dict:
    """Shape, counts, date range and the written index: from the threads' counts (Memory.recount_threads),
    not from every passage. An empty memory's is all zeros (the console shows it so)."""
    held = memory.held_threads()
    by_kind = {PLURAL[r["kind"]]: r["n"] for r in held.values("kind").annotate(n=Sum("passage_count"))}
    span = held.aggregate(first=Min("first_at"), last=Max("last_at"))
    items = memory.items()
    return {
        "end_user": memory.end_user.external_id,
        "counts": {
            "items": items.count(),
            "unread_items": items.filter(read_at__isnull=True).exclude(failed_version=F("version")).count(),
            "failed_items": items.filter(failed_version=F("version")).count(),
            "threads": held.count(),
            "passages": sum(by_kind.values()),
            "passages_by_kind": by_kind,
        },
        "first_at": iso(span["first"]),
        "last_at": iso(span["last"]),
        "places": _places(memory),
        "index": memory.written_index(),
    }


def memory_grep(*, memory: Memory, pattern: str, scope: str = "", limit: int) -> dict:
    """Case-insensitive substring matches over current passages, newest first."""
    memory.must_hold_items()
    passages = memory.passages().filter(text__icontains=pattern)
    if scope:
        passages = passages.filter(path__prefix=scope.strip().lstrip("/"))
    hits = []
    for p in passages.order_by("-at", "-seq")[:limit]:
        start = p.text.lower().find(pattern.lower())
        hits.append(passage_json(p, match=p.text[max(0, start - MATCH_CONTEXT) : start + len(pattern) + MATCH_CONTEXT]))
    return {"pattern": pattern, "found": len(hits), "hits": hits}


# ---- for the console's end-user page: threads and items as a person browses them --------------------------


def threads_by_recency(*, memory: Memory, limit: int) -> list[Thread]:
    """The memory's threads that hold passages, most recent passage first, at most `limit`; each carries
    `passage_count` and `last_at`."""
    return list(memory.held_threads().order_by("-last_at", "tid")[:limit])


def thread_of(*, memory: Memory, tid: str) -> Thread | None:
    """The memory's thread `tid`; None when it has none by that id."""
    return memory.threads().filter(tid=tid).first()


def thread_passages(*, memory: Memory, thread: Thread, limit: int) -> list[dict]:
    """The first `limit` passages of one thread, in order, as every tool shows them."""
    return [passage_json(p) for p in memory.passages().filter(thread=thread).order_by("seq")[:limit]]


def item_of(*, memory: Memory, item_id: str) -> Item | None:
    """The memory's item with the caller's id `item_id`; None when it has none by that id."""
    return memory.items().filter(external_id=item_id).first()


def passage_ids_of_item(*, memory: Memory, item: Item) -> list[str]:
    """The ids of the passages cut from `item` (what forgetting it takes with it)."""
    return [passage_id(p.thread.tid, p.seq) for p in memory.passages().filter(item=item)]
