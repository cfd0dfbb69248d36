"""The playground: run any tool the member's role allows, for any end user, and see what an assistant would.

A run goes through the very dispatch /v1/mcp uses (`mcp.protocol.dispatch` on a Session of `mcp_tools`), with
a Context built here: the project from the URL (through the console's tenant helper), the end user from the
End user field (checked as X-Twin-Account is), and the access the member's role gives (a Viewer reads only).
So a bound, a refusal or an answer is the service's own, never the console's copy of it.

The argument form is generated from the registry's input schema: strings with their lengths, integers with
their range and default, booleans, ISO dates with their pattern, and memory_add's items as repeated rows (or
JSON). Nothing here knows one tool from another except through its schema.
"""

import json
import re
import shlex
from datetime import datetime
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from accounts.auth import ACCOUNT_HEADER, Context, parse_account
from accounts.errors import ApiError
from accounts.models import END_USER_ID_MAX, Access
from accounts.permissions import can
from accounts.selectors import end_user_of_project
from mcp.protocol import INVALID_PARAMS, Session, dispatch
from memory.limits import TEXT_MAX
from memory.tools import BY_NAME, Tool, mcp_tools
from memory.validation import DATE_PATTERN
from twin import json_limits

from .access import project_for
from .security import console_page

USE, WRITE = "use_playground", "run_write_tools"
RECENT_END_USERS = 8  # how many end users the End user field offers again
ROW_FIELDS = ("text", "kind", "id", "at", "author", "session")  # an item row; the rest through JSON
DEFAULT_TOOL = "memory_search"
NUMBER_DIGITS_MAX = 18  # more digits than any bound has: such a number is only ever out of range
NUMBER_TOO_LONG = 10**NUMBER_DIGITS_MAX
API_KEY_VARIABLE = "$TWIN_MEMORY_API_KEY"


# --- the form, from the input schema -------------------------------------------------------------------

def _widget(spec: dict) -> str:
    kind = spec.get("type")
    if kind == "string":
        if spec.get("pattern") == DATE_PATTERN:
            return "date"
        if "enum" in spec:
            return "select"
        return "textarea" if spec.get("maxLength", 0) > TEXT_MAX else "text"
    if kind == "integer":
        return "number"
    if kind == "boolean":
        return "checkbox"
    if kind == "array" and spec.get("items", {}).get("type") == "object":
        return "rows"
    return "json"  # an object, or anything else: JSON text


def _field(name: str, spec: dict, *, input_name: str, required: bool, value=None) -> dict:
    """One input's description for the template: the widget and the HTML attributes of the schema's bounds."""
    return {
        "name": name, "input": input_name, "widget": _widget(spec), "required": required,
        "description": spec.get("description", ""), "default": spec.get("default"),
        "minlength": spec.get("minLength") or None, "maxlength": spec.get("maxLength"),
        "min": spec.get("minimum"), "max": spec.get("maximum"), "choices": spec.get("enum", ()),
        "min_items": spec.get("minItems"), "max_items": spec.get("maxItems"),
        "value": spec.get("default", "") if value is None else value, "error": "", "bounds": bounds(spec),
        "html_required": required,
    }


def bounds(spec: dict) -> str:
    """The schema's bounds in a few words, shown beside the input."""
    kind = spec.get("type")
    if kind == "string" and spec.get("pattern") == DATE_PATTERN:
        return "an ISO day or time: YYYY-MM-DD or YYYY-MM-DDTHH:MM"
    if kind == "string" and "enum" in spec:
        return f"one of {', '.join(spec['enum'])}" + (f"; default {spec['default']}" if "default" in spec else "")
    if kind == "string" and "maxLength" in spec:
        return f"{spec.get('minLength', 0)} to {spec['maxLength']:,} characters"
    if kind == "integer":
        return f"{spec.get('minimum')} to {spec.get('maximum')}" + (
            f"; default {spec['default']}" if "default" in spec else "")
    if kind == "array":
        return f"{spec.get('minItems', 0)} to {spec.get('maxItems'):,} entries"
    if kind == "boolean":
        return f"default {str(spec.get('default', False)).lower()}"
    return ""


def _row(spec: dict, prefix: str, index: int, values: dict) -> list[dict]:
    item = spec["items"]
    row = [_field(name, item["properties"][name], input_name=f"{prefix}-{index}-{name}",
                  required=name in item.get("required", ()), value=values.get(name))
           for name in ROW_FIELDS if name in item["properties"]]
    for field in row:
        field["html_required"] = False  # the JSON box may be used instead of the rows
    return row


def form_fields(tool: Tool, data=None, *, rows: list[dict] | None = None, json_text: dict | None = None) -> list[dict]:
    """The tool's arguments as form fields, filled from `data` (a POST, or a GET's arg-<name> values)."""
    data = data or {}
    fields = []
    for name, spec in tool.properties.items():
        input_name = f"arg-{name}"
        value = data.get(input_name)
        if _widget(spec) == "checkbox":
            value = (input_name in data) if data else spec.get("default", False)
        field = _field(name, spec, input_name=input_name, required=name in tool.required, value=value)
        if field["widget"] == "rows":
            filled = (rows or {}).get(name) or [{}]
            field["rows"] = [_row(spec, name, i, values) for i, values in enumerate(filled)]
            field["json_input"] = f"{name}-json"
            field["json_value"] = (json_text or {}).get(name, "")
        fields.append(field)
    return fields


def _posted_rows(name: str, data) -> list[dict]:
    """The item rows a form sent, in order, without the untouched ones (a row with only its default kind)."""
    found: dict[int, dict] = {}
    pattern = re.compile(rf"^{re.escape(name)}-(\d+)-(\w+)$")
    for key in data:
        match = pattern.match(key)
        if match and data.get(key, "") != "":
            found.setdefault(int(match[1]), {})[match[2]] = data[key]
    return [row for _, row in sorted(found.items()) if set(row) - {"kind"}]


def _number(raw: str):
    """A typed integer as the schema should judge it: one too long to be any bound's (int() of 4,300 digits
    raises) is read as NUMBER_TOO_LONG with its sign, so the schema refuses it by its range; not a number at
    all, it is passed through as text, so the schema names it."""
    if not re.fullmatch(r"-?\d+", raw):
        return raw
    digits = raw.lstrip("-")
    if len(digits) > NUMBER_DIGITS_MAX:
        return -NUMBER_TOO_LONG if raw.startswith("-") else NUMBER_TOO_LONG
    return int(raw)


def arguments_from(tool: Tool, data) -> tuple[dict, dict, dict, dict]:
    """(arguments, form errors, item rows, JSON texts) from a posted form.

    Empty optional strings are left out (the tool's default applies), a number that is not one is passed
    through so the schema names it, and items come from the JSON box when it is filled, else from the rows.
    """
    arguments, errors, rows, texts = {}, {}, {}, {}
    for name, spec in tool.properties.items():
        input_name, widget = f"arg-{name}", _widget(spec)
        raw = data.get(input_name, "")
        if widget == "checkbox":
            if (input_name in data) != spec.get("default", False):
                arguments[name] = input_name in data
        elif widget == "number":
            if raw.strip():
                arguments[name] = _number(raw.strip())
        elif widget == "rows":
            texts[name] = data.get(f"{name}-json", "").strip()
            rows[name] = _posted_rows(name, data)
            source = texts[name] or None
            if source:
                try:
                    arguments[name] = json_limits.loads(source)
                except json_limits.InvalidJson as bad:
                    errors[f"{name}-json"] = f"{name}: not valid JSON ({bad})"
            else:
                arguments[name] = rows[name]
        elif widget == "json":
            if raw.strip():
                try:
                    arguments[name] = json_limits.loads(raw)
                except json_limits.InvalidJson as bad:
                    errors[input_name] = f"{name}: not valid JSON ({bad})"
        elif raw != "" or name in tool.required:
            arguments[name] = raw
    return arguments, errors, rows, texts


def input_for(field_path: str, *, json_used: set[str]) -> str:
    """The form input an error's field names: items[0].text is items-0-text, limit is arg-limit."""
    match = re.match(r"^(\w+)\[(\d+)\](?:\.(\w+))?", field_path)
    if match:
        name, index, sub = match.groups()
        if name in json_used or sub not in ROW_FIELDS:
            return f"{name}-json" if name in json_used else f"arg-{name}"
        return f"{name}-{index}-{sub}"
    return f"arg-{field_path.split('.')[0]}"


# --- the call, and what it is equivalent to --------------------------------------------------------------

def run_tool(*, context: Context, tool_name: str, arguments: dict) -> dict:
    """One tools/call through /v1/mcp's dispatch, surface "console". Returns what the page shows:
    `status` (what the HTTP route would answer), `answer` (the tool's JSON, or its error), `rpc` (the reply)."""
    session = Session(context=context, tools=mcp_tools(context), surface="console")
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool_name, "arguments": arguments}}
    try:
        reply = dispatch(session, message)
    except ApiError as refused:  # a write tool for read access: the transport answers 403
        return {"status": refused.status, "answer": refused.as_dict(), "rpc": None}
    if "error" in reply:
        data = reply["error"].get("data") or {}
        status = 400 if reply["error"]["code"] == INVALID_PARAMS else 500
        return {"status": status, "answer": {"message": reply["error"]["message"], **data}, "rpc": reply}
    result = reply["result"]
    answer = json.loads(result["content"][0]["text"])
    return {"status": 404 if result["isError"] else 200, "answer": answer, "rpc": reply}


def equivalents(request, *, tool: Tool, account: str, arguments: dict) -> dict:
    """The same call as a curl line to the tool's HTTP route, and as the MCP tools/call body."""
    body = json.dumps(arguments, ensure_ascii=False)
    url = request.build_absolute_uri(f"/v1/memory/{tool.route}")
    curl = (f"curl -s {url} -H \"Authorization: Bearer {API_KEY_VARIABLE}\" "
            f"-H {shlex.quote(f'{ACCOUNT_HEADER}: {account}')} -H \"Content-Type: application/json\" "
            f"-d {shlex.quote(body)}")
    mcp = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool.name, "arguments": arguments}}
    return {"curl": curl, "mcp": json.dumps(mcp, indent=2, ensure_ascii=False),
            "mcp_url": request.build_absolute_uri("/v1/mcp")}


# --- the readable view of an answer ---------------------------------------------------------------------

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
    return moment.strftime("%Y-%m-%d %H:%M") + (" UTC" if moment.utcoffset() is not None and
                                                 not moment.utcoffset() else moment.strftime(" %z"))


def memory_url(project, account: str, path: str) -> str:
    """Where a memory path opens in the console: the end user's memory view when they exist."""
    base = reverse("console:end-user", kwargs={"slug": project.slug, "account": account})
    return f"{base}?{urlencode({'path': path})}"


def _short(path) -> str:
    """A passage path as a link's text: its thread's first characters and the passage (the title has it all)."""
    parts = (path or "").removesuffix(".md").split("/")
    return f"{parts[-2][:10]}…/{parts[-1]}" if len(parts) >= 2 and parts[-2].startswith("th_") else (path or "")


def readable(answer: dict, *, link) -> dict:
    """The answer's parts a person reads: passages (hits) with links, facts with their dates, a history
    chain, a directory, a file, saved items, counts. `link(path)` gives a path's URL."""
    view = {}
    passages = answer.get("hits") or answer.get("passages") or []
    view["passages"] = [{**p, "url": link(p["path"]) if p.get("path") else "", "when": when(p.get("at"))}
                        for p in passages if isinstance(p, dict)]
    view["facts"] = [{**f, "since_text": when(f.get("since")), "until_text": when(f.get("until")) or "now",
                      "said_text": when(f.get("said_at")), "url": link(f["source"]) if f.get("source") else "",
                      "source_label": _short(f.get("source"))}
                     for f in answer.get("known") or []]
    view["chain"] = [{**e, "from_text": when(e.get("valid_from")), "to_text": when(e.get("valid_to")) or "now",
                      "recorded_text": when(e.get("recorded_at")), "retracted_text": when(e.get("retracted_at")),
                      "url": link(e["source"]["path"]) if (e.get("source") or {}).get("path") else "",
                      "source_label": _short((e.get("source") or {}).get("path"))}
                     for e in answer.get("chain") or []]
    view["children"] = [{**c, "url": link(c["path"]) if c.get("path") else ""}
                        for c in answer.get("children") or [] if isinstance(c, dict)]
    if isinstance(answer.get("text"), str) and answer.get("path") is not None and not passages:
        view["file"] = {"path": answer["path"], "text": answer["text"], "url": link(answer["path"])}
    # Every key is set, so a template never falls back to a dict's own .items.
    view["file"] = view.get("file")
    view["items"] = answer["items"] if isinstance(answer.get("items"), list) else []
    counts = answer.get("counts") if isinstance(answer.get("counts"), dict) else {}
    view["counts"] = [(key, ", ".join(f"{k} {v}" for k, v in value.items()) if isinstance(value, dict) else value)
                      for key, value in counts.items()]
    view["index"] = answer.get("index", "") if counts else ""
    view["details"] = []
    if answer.get("error"):  # why memory could not answer, and what exists instead
        view["details"] = [(key, ", ".join(map(str, value)) if isinstance(value, list) else value)
                           for key, value in answer.items() if key not in ("error", "message") and value]
    view["empty"] = not any(view.values())
    return view


# --- the pages --------------------------------------------------------------------------------------------

def _access(request) -> str:
    return Access.WRITE if can(request.membership.role, WRITE) else Access.READ


def _recent_key(project) -> str:
    return f"playground:{project.pk}:end_users"


def _remember(request, project, account: str) -> None:
    recent = [account] + [a for a in request.session.get(_recent_key(project), []) if a != account]
    request.session[_recent_key(project)] = recent[:RECENT_END_USERS]


def _offered(project, access: str) -> list[Tool]:
    return mcp_tools(Context(project=project, account="", access=access))


def _render(request, project, *, tool: Tool, end_user: str, fields: list[dict], status: int = 200, **extra):
    access = _access(request)
    recent = request.session.get(_recent_key(project), [])
    context = {
        "project": project, "tools": _offered(project, access), "tool": tool, "end_user": end_user,
        "fields": fields, "access": access, "can_write": access == Access.WRITE, "recent_end_users": recent,
        "end_user_max": END_USER_ID_MAX, "account_header": ACCOUNT_HEADER, "date_pattern": DATE_PATTERN,
        "errors": {}, "result": None, **extra,
    }
    return render(request, "console/playground.html", context, status=status)


def _link_for(request, project, account: str):
    """A path's link: the end user's memory view when they exist, else the playground reading that path."""
    if end_user_of_project(project=project, external_id=account) is not None:
        return lambda path: memory_url(project, account, path)
    page = reverse("console:playground", kwargs={"slug": project.slug})
    return lambda path: f"{page}?{urlencode({'tool': 'memory_read', 'end_user': account, 'arg-path': path})}"


@console_page
@login_required
def page(request, slug: str):
    """The playground, with the tool and end user from the query (?tool=&end_user=&arg-<name>=) or the last."""
    project = project_for(request, slug, USE)
    offered = {t.name: t for t in _offered(project, _access(request))}
    tool = offered.get(request.GET.get("tool")) or offered.get(DEFAULT_TOOL) or next(iter(offered.values()))
    recent = request.session.get(_recent_key(project), [])
    end_user = request.GET.get("end_user", recent[0] if recent else "")[:END_USER_ID_MAX]
    prefill = {k: v for k, v in request.GET.items() if k.startswith("arg-")}
    arguments = arguments_from(tool, prefill)[0]
    return _render(request, project, tool=tool, end_user=end_user, fields=form_fields(tool, prefill),
                   same_call=equivalents(request, tool=tool, account=end_user or "END_USER", arguments=arguments))


@console_page
@require_POST
@login_required
def run(request, slug: str):
    """Run one tool (CSRF-protected POST) and show its answer: readable, as JSON, and as curl and MCP."""
    project = project_for(request, slug, USE)
    offered = {t.name: t for t in _offered(project, _access(request))}
    name = request.POST.get("tool", "")
    # Any MCP tool is parsed (so a hand-made memory_add by a Viewer reaches dispatch and is refused there).
    tool = BY_NAME.get(name) if name in BY_NAME and BY_NAME[name].mcp and not BY_NAME[name].local_only else None
    end_user = request.POST.get("end_user", "").strip()
    if tool is None:
        fallback = offered.get(DEFAULT_TOOL) or next(iter(offered.values()))
        return _render(request, project, tool=fallback, end_user=end_user, fields=form_fields(fallback), status=400,
                       problem=f"No tool named {name!r}: choose one of {', '.join(offered)}.")
    arguments, errors, rows, texts = arguments_from(tool, request.POST)
    try:
        account = parse_account(end_user)
    except ApiError as refused:
        account, errors["end_user"] = None, refused.message
    result = None
    if not errors:
        _remember(request, project, account)
        context = Context(project=project, account=account, access=_access(request))
        result = run_tool(context=context, tool_name=tool.name, arguments=arguments)
        if result["status"] == 400 and result["answer"].get("field"):
            target = input_for(result["answer"]["field"], json_used={n for n, t in texts.items() if t})
            errors[target] = result["answer"]["message"]
        result["json"] = json.dumps(result["answer"], indent=2, ensure_ascii=False)
        result["view"] = readable(result["answer"], link=_link_for(request, project, account))
    fields = form_fields(tool, request.POST, rows=rows, json_text=texts)
    for field in fields:
        field["error"] = errors.get(field["input"], "")
        for row in field.get("rows", ()):
            for sub in row:
                sub["error"] = errors.get(sub["input"], "")
        if field.get("json_input"):
            field["json_error"] = errors.get(field["json_input"], "")
    status = result["status"] if result and result["status"] in (400, 403) else (400 if errors else 200)
    return _render(request, project, tool=tool, end_user=end_user, fields=fields, status=status, result=result,
                   errors=errors, arguments=arguments,
                   same_call=equivalents(request, tool=tool, account=end_user, arguments=arguments))
