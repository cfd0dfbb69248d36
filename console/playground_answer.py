"""The playground's readable view of a tool's answer: passages with links into the memory view, facts and a
history chain with their dates as people read them, a directory, a file, saved items, counts, and why memory
could not answer. The JSON beside it is the answer itself; this only arranges it."""

from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django.urls import reverse

from accounts.selectors import end_user_of_project

THREAD_SHOWN = 10  # characters of a thread id in a link's text ("th_" and 7 hex): enough to tell threads apart


def when(value) -> str:
    """An ISO time as people read it: the day alone at midnight UTC, else the day and the minute."""
    if not value:
        return ""
    try:
        moment = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return str(value)
    if (moment.hour, moment.minute, moment.second) == (0, 0, 0):
        return moment.date().isoformat()
    return moment.strftime("%Y-%m-%d %H:%M") + (
        " UTC" if moment.utcoffset() is not None and not moment.utcoffset() else moment.strftime(" %z")
    )


def memory_url(project, account: str, path: str) -> str:
    """Where a memory path opens in the console: the end user's memory view when they exist."""
    base = reverse("console:end-user", kwargs={"slug": project.slug, "account": account})
    return f"{base}?{urlencode({'path': path})}"


def _short(path) -> str:
    """A passage path as a link's text: its thread's first characters and the passage (the title has it all)."""
    parts = (path or "").removesuffix(".md").split("/")
    return (
        f"{parts[-2][:THREAD_SHOWN]}…/{parts[-1]}" if len(parts) >= 2 and parts[-2].startswith("th_") else (path or "")
    )


def readable(answer: dict, *, link) -> dict:
    """The answer's parts a person reads: passages (hits) with links, facts with their dates, a history
    chain, a directory, a file, saved items, counts. `link(path)` gives a path's URL."""
    view: dict[str, Any] = {}
    passages = answer.get("hits") or answer.get("passages") or []
    view["passages"] = [
        {**p, "url": link(p["path"]) if p.get("path") else "", "when": when(p.get("at"))}
        for p in passages
        if isinstance(p, dict)
    ]
    view["facts"] = [
        {
            **f,
            "since_text": when(f.get("since")),
            "until_text": when(f.get("until")) or "now",
            "said_text": when(f.get("said_at")),
            "url": link(f["source"]) if f.get("source") else "",
            "source_label": _short(f.get("source")),
        }
        for f in answer.get("known") or []
    ]
    view["chain"] = [
        {
            **e,
            "from_text": when(e.get("valid_from")),
            "to_text": when(e.get("valid_to")) or "now",
            "recorded_text": when(e.get("recorded_at")),
            "retracted_text": when(e.get("retracted_at")),
            "url": link(e["source"]["path"]) if (e.get("source") or {}).get("path") else "",
            "source_label": _short((e.get("source") or {}).get("path")),
        }
        for e in answer.get("chain") or []
    ]
    view["children"] = [
        {**c, "url": link(c["path"]) if c.get("path") else ""}
        for c in answer.get("children") or []
        if isinstance(c, dict)
    ]
    if isinstance(answer.get("text"), str) and answer.get("path") is not None and not passages:
        view["file"] = {"path": answer["path"], "text": answer["text"], "url": link(answer["path"])}
    # Every key is set, so a template never falls back to a dict's own .items.
    view["file"] = view.get("file")
    items = answer["items"] if isinstance(answer.get("items"), list) else []
    view["items"] = [{**item, "note": item_note(item)} for item in items if isinstance(item, dict)]
    counts = answer["counts"] if isinstance(answer.get("counts"), dict) else {}
    view["counts"] = [
        (key, ", ".join(f"{k} {v}" for k, v in value.items()) if isinstance(value, dict) else value)
        for key, value in counts.items()
    ]
    view["index"] = answer.get("index", "") if counts else ""
    view["details"] = []
    if answer.get("error"):  # why memory could not answer, and what exists instead
        view["details"] = [
            (key, ", ".join(map(str, value)) if isinstance(value, list) else value)
            for key, value in answer.items()
            if key not in ("error", "message") and value
        ]
    view["empty"] = not any(view.values())
    return view


def item_note(item: dict) -> str:
    """What became of a saved item beyond its status: what a duplicate repeats, why an item was refused (the
    field and the kind of secret, never the secret), which fields were stored redacted."""
    if item.get("status") == "duplicate":
        return f"not stored again: it repeats {item.get('duplicate_of')}"
    if item.get("status") == "refused":
        return f"not stored: {item.get('field')} holds a secret ({item.get('secret')})"
    redacted = item.get("redacted") or []
    if redacted:
        return "stored with " + ", ".join(f"{r.get('field')} ({r.get('secret')})" for r in redacted) + " redacted"
    return ""


def link_for(request, project, account: str):
    """A path's link: the end user's memory view when they exist, else the playground reading that path."""
    if end_user_of_project(project=project, external_id=account) is not None:
        return lambda path: memory_url(project, account, path)
    page = reverse("console:playground", kwargs={"slug": project.slug})
    return lambda path: f"{page}?{urlencode({'tool': 'memory_read', 'end_user': account, 'arg-path': path})}"
