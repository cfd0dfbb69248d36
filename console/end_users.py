"""End users: the project's end users (counts, last activity, search), and one end user's memory as the
tools see it: the file tree (memory_ls / memory_read), passages by thread, the written index, the subjects
and their history as a timeline, and forget (one item, or the whole end user) for Owners and Admins.

The end user is always found through the project (accounts.selectors.end_user_of_project), and every read
goes through memory's own functions on a Memory built from it: nothing here re-implements memory logic.
"""

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse

from accounts.selectors import end_user_count, end_user_of_project, end_users_of_project
from memory.errors import CannotAnswer
from memory.paths import subject_path
from memory.project_selectors import sizes_of_end_users
from memory.query import browse, history
from memory.selectors import Memory, scoped
from memory.services import memory_forget

from .access import NOT_FOUND, project_for
from .forms import SEARCH_MAX, ForgetForm
from .security import console_page

TABS = (("files", "Files"), ("threads", "Passages by thread"), ("index", "Written index"), ("subjects", "Subjects"))
THREADS_SHOWN = 100
PASSAGES_SHOWN = 500


@console_page
@login_required
def end_users(request, slug: str):
    """The project's end users with items, passages and last activity; `q` searches their ids."""
    project = project_for(request, slug, "view_end_users")
    query = request.GET.get("q", "").strip()[:SEARCH_MAX]
    rows = end_users_of_project(project=project, search=query)
    with scoped(project.pk):  # their items and passages, counted
        sizes = sizes_of_end_users(end_user_ids=[e.pk for e in rows])
    for row in rows:
        row.items_n, row.passages_n = sizes[row.pk]["items"], sizes[row.pk]["passages"]
    return render(
        request,
        "console/end_users.html",
        {"project": project, "rows": rows, "q": query, "total": end_user_count(project=project, search=query)},
    )


def _memory(project, account: str) -> Memory:
    end_user = end_user_of_project(project=project, external_id=account)
    if end_user is None:
        raise Http404(NOT_FOUND)
    return Memory(end_user)


def _files(memory: Memory, path: str) -> dict:
    """The tree at `path` (a directory) or one file's text, exactly as memory_ls / memory_read answer."""
    path = path.strip().lstrip("/")
    out: dict[str, Any] = {"path": path, "crumbs": _crumbs(path)}
    try:
        if path == "" or path.endswith("/"):
            out["listing"] = browse.memory_ls(memory=memory, path=path)
        else:
            out["file"] = browse.memory_read(memory=memory, path=path)
    except CannotAnswer as missing:
        out["missing"] = missing.message
    return out


def _crumbs(path: str) -> list[dict]:
    crumbs, so_far = [{"name": "memory", "path": ""}], ""
    parts = [p for p in path.split("/") if p]
    for i, part in enumerate(parts):
        last = i == len(parts) - 1 and not path.endswith("/")
        so_far += part + ("" if last else "/")
        crumbs.append({"name": part, "path": so_far})
    return crumbs


def _threads(memory: Memory, selected: str) -> dict:
    """The end user's threads, most recent first, and the passages of one (the chosen or the newest)."""
    threads = browse.threads_by_recency(memory=memory, limit=THREADS_SHOWN)
    current = (
        next((t for t in threads if t.tid == selected), None)
        or (browse.thread_of(memory=memory, tid=selected) if selected else None)
        or (threads[0] if threads else None)
    )
    passages = []
    if current is not None:
        passages = browse.thread_passages(memory=memory, thread=current, limit=PASSAGES_SHOWN)
    return {"threads": threads, "thread": current, "passages": passages}


def _subjects(memory: Memory, selected: str) -> dict:
    """Every subject with a fact, and one subject's history grouped by attribute, oldest first."""
    known = sorted(memory.subjects().items(), key=lambda kv: kv[1].casefold())
    out: dict[str, Any] = {"subjects": [{"key": k, "name": n} for k, n in known], "subject": None}
    chosen = dict(known).get(selected) if selected else None
    if chosen:
        found = history.memory_history(memory=memory, subject=chosen)
        by_attribute: dict[str, list] = {}
        for entry in found["chain"]:
            by_attribute.setdefault(entry["attribute"], []).append(entry)
        out["subject"] = {
            "key": selected,
            "name": found["subject"],
            "attributes": sorted(by_attribute.items()),
            "path": subject_path(found["subject"]),
        }
    return out


@console_page
@login_required
def end_user(request, slug: str, account: str):
    """One end user's memory, read-only; `tab` chooses files, threads, index or subjects."""
    project = project_for(request, slug, "view_end_users")
    memory = _memory(project, account)
    with memory.scoped():
        return _end_user_page(request, project, memory)


def _end_user_page(request, project, memory: Memory):
    tab = request.GET.get("tab", "files")
    if tab not in dict(TABS):
        tab = "files"
    context = {
        "project": project,
        "end_user": memory.end_user,
        "tab": tab,
        "tabs": TABS,
        "overview": browse.overview(memory),
    }
    if tab == "files":
        context.update(_files(memory, request.GET.get("path", "")))
    elif tab == "threads":
        context.update(_threads(memory, request.GET.get("thread", "")))
    elif tab == "index":
        context["index"] = memory.written_index()
    else:
        context.update(_subjects(memory, request.GET.get("subject", "")))
    return render(request, "console/end_user.html", context)


@console_page
@login_required
def forget(request, slug: str, account: str):
    """GET: the confirmation for one item (`item`) or the whole end user (`all`). POST: forget it, with
    everything derived from it (passages, embeddings, facts, the index's lines)."""
    project = project_for(request, slug, "forget_memory")
    memory = _memory(project, account)
    with memory.scoped():
        return _forget(request, project, memory, account)


def _forget(request, project, memory: Memory, account: str):
    back = reverse("console:end-user", kwargs={"slug": project.slug, "account": account})
    if request.method != "POST":
        item_id = request.GET.get("item", "")
        item = browse.item_of(memory=memory, item_id=item_id) if item_id else None
        if item_id and item is None:
            raise Http404(NOT_FOUND)
        return render(
            request,
            "console/end_user_forget.html",
            {
                "project": project,
                "end_user": memory.end_user,
                "item": item,
                "everything": item is None,
                "passages": browse.passage_ids_of_item(memory=memory, item=item) if item else [],
                "counts": browse.overview(memory)["counts"],
                "back": back,
            },
        )
    form = ForgetForm(request.POST)
    if not form.is_valid():
        raise Http404(NOT_FOUND)
    data = form.cleaned_data
    if data["everything"]:
        if data["confirm"].strip() != memory.end_user.external_id:
            messages.error(request, "Type the end user's id exactly to forget everything about them.")
            return redirect(f"{request.path}?all=1")
        answer = memory_forget(memory=memory, everything=True)
        messages.success(request, f"Forgot {account}: {answer['forgotten']} items and everything derived from them.")
        return redirect("console:end-users", slug=project.slug)
    if not data["item"]:
        raise Http404(NOT_FOUND)
    try:
        memory_forget(memory=memory, ids=[data["item"]])
    except CannotAnswer:
        raise Http404(NOT_FOUND) from None
    messages.success(request, f"Forgot item {data['item']} and everything derived from it.")
    return redirect(back)
