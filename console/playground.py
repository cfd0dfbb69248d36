"""The playground: run any tool the member's role allows, for any end user, and see what an assistant would.

A run is one call to the registry (`memory.dispatch.call`, surface "console"), the path every surface takes,
with a Context built here: the project from the URL (through the console's tenant helper), the end user from
the End user field (checked as X-Twin-Account is), and the access the member's role gives (a Viewer reads
only). The page renders the call's outcome: its status and JSON are the HTTP route's, so a bound, a refusal
or an answer is the service's own, never the console's copy of it.

The argument form is generated from the registry's input schema: strings with their lengths, integers with
their range and default, booleans, ISO dates with their pattern, and memory_add's items as repeated rows (or
JSON). Nothing here knows one tool from another except through its schema.

Beside the End user field, the page links that end user's memory as a file: its Export (a download) and,
for Owners and Admins, its Import (on the end user's page, console/portability.py).
"""

import json
import logging
import re
import shlex
from http import HTTPStatus
from typing import Any

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_POST

from accounts.auth import ACCOUNT_HEADER, Context, parse_account
from accounts.errors import ApiError
from accounts.models import END_USER_ID_MAX, Access
from accounts.permissions import can
from accounts.selectors import end_user_of_project
from memory.dispatch import call
from memory.limits import TEXT_MAX
from memory.outcome import failure_message
from memory.tools import Tool, mcp_tools
from memory.validation import DATE_PATTERN
from twin import json_limits

from .access import project_for
from .playground_answer import link_for, readable
from .security import console_page

USE, WRITE = "use_playground", "run_write_tools"
RECENT_END_USERS = 8  # how many end users the End user field offers again
ROW_FIELDS = ("text", "kind", "id", "at", "author", "session")  # an item row; the rest through JSON
DEFAULT_TOOL = "memory_search"
NUMBER_DIGITS_MAX = 18  # more digits than any bound has: such a number is only ever out of range
NUMBER_TOO_LONG = 10**NUMBER_DIGITS_MAX
API_KEY_VARIABLE = "$TWIN_MEMORY_API_KEY"
FAILED = 500  # the status shown for a tool that crashed, as the HTTP route would answer

log = logging.getLogger(__name__)


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
        "name": name,
        "input": input_name,
        "widget": _widget(spec),
        "required": required,
        "description": spec.get("description", ""),
        "default": spec.get("default"),
        "minlength": spec.get("minLength") or None,
        "maxlength": spec.get("maxLength"),
        "min": spec.get("minimum"),
        "max": spec.get("maximum"),
        "choices": spec.get("enum", ()),
        "min_items": spec.get("minItems"),
        "max_items": spec.get("maxItems"),
        "value": spec.get("default", "") if value is None else value,
        "error": "",
        "bounds": bounds(spec),
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
            f"; default {spec['default']}" if "default" in spec else ""
        )
    if kind == "array":
        return f"{spec.get('minItems', 0)} to {spec.get('maxItems'):,} entries"
    if kind == "boolean":
        return f"default {str(spec.get('default', False)).lower()}"
    return ""


def _row(spec: dict, prefix: str, index: int, values: dict) -> list[dict]:
    item = spec["items"]
    row = [
        _field(
            name,
            item["properties"][name],
            input_name=f"{prefix}-{index}-{name}",
            required=name in item.get("required", ()),
            value=values.get(name),
        )
        for name in ROW_FIELDS
        if name in item["properties"]
    ]
    for field in row:
        field["html_required"] = False  # the JSON box may be used instead of the rows
    return row


def form_fields(
    tool: Tool, data=None, *, rows: dict[str, list[dict]] | None = None, json_text: dict | None = None
) -> list[dict]:
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


def arguments_from(tool: Tool, data) -> tuple[dict[str, Any], dict[str, str], dict[str, list[dict]], dict[str, str]]:
    """(arguments, form errors, item rows, JSON texts) from a posted form.

    Empty optional strings are left out (the tool's default applies), a number that is not one is passed
    through so the schema names it, and items come from the JSON box when it is filled, else from the rows.
    """
    arguments: dict[str, Any] = {}
    errors: dict[str, str] = {}
    rows: dict[str, list[dict]] = {}
    texts: dict[str, str] = {}
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


def with_errors(fields: list[dict], errors: dict) -> list[dict]:
    """The fields with each input's error (by input name) set beside it, for the template."""
    for field in fields:
        field["error"] = errors.get(field["input"], "")
        for row in field.get("rows", ()):
            for sub in row:
                sub["error"] = errors.get(sub["input"], "")
        if field.get("json_input"):
            field["json_error"] = errors.get(field["json_input"], "")
    return fields


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


def run_tool(*, context: Context, tool: Tool, arguments: dict) -> dict:
    """One call through the registry, surface "console", as the page shows it: `status` (what the HTTP route
    answers) and `answer` (the tool's JSON, or its error). A crash is logged and shown as failed."""
    try:
        outcome = call(tool, context, arguments, surface="console")
    except Exception as error:
        log.exception("Tool failed")
        return {"status": FAILED, "answer": {"message": failure_message(error)}}
    return {"status": outcome.status, "answer": outcome.body}


def equivalents(request, *, tool: Tool, account: str, arguments: dict) -> dict:
    """The same call as a curl line to the tool's HTTP route, and as the MCP tools/call body."""
    body = json.dumps(arguments, ensure_ascii=False)
    url = request.build_absolute_uri(f"/v1/memory/{tool.route}")
    curl = (
        f'curl -s {url} -H "Authorization: Bearer {API_KEY_VARIABLE}" '
        f'-H {shlex.quote(f"{ACCOUNT_HEADER}: {account}")} -H "Content-Type: application/json" '
        f"-d {shlex.quote(body)}"
    )
    mcp = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool.name, "arguments": arguments}}
    return {
        "curl": curl,
        "mcp": json.dumps(mcp, indent=2, ensure_ascii=False),
        "mcp_url": request.build_absolute_uri("/v1/mcp"),
    }


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
        "project": project,
        "tools": _offered(project, access),
        "tool": tool,
        "end_user": end_user,
        "fields": fields,
        "access": access,
        "can_write": access == Access.WRITE,
        "recent_end_users": recent,
        "end_user_max": END_USER_ID_MAX,
        "account_header": ACCOUNT_HEADER,
        "date_pattern": DATE_PATTERN,
        "errors": {},
        "result": None,
        # the end user whose memory the page's Export and Import links reach: only one memory was made for
        "known_end_user": end_user_of_project(project=project, external_id=end_user) if end_user else None,
        **extra,
    }
    return render(request, "console/playground.html", context, status=status)


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
    return _render(
        request,
        project,
        tool=tool,
        end_user=end_user,
        fields=form_fields(tool, prefill),
        same_call=equivalents(request, tool=tool, account=end_user or "END_USER", arguments=arguments),
    )


@console_page
@require_POST
@login_required
def run(request, slug: str):
    """Run one tool (CSRF-protected POST) and show its answer: readable, as JSON, and as curl and MCP."""
    project = project_for(request, slug, USE)
    offered = {t.name: t for t in _offered(project, _access(request))}
    name = request.POST.get("tool", "")
    # Any tool offered to a writer is run (so a hand-made memory_add by a Viewer is refused by the registry).
    tool = {t.name: t for t in _offered(project, Access.WRITE)}.get(name)
    end_user = request.POST.get("end_user", "").strip()
    if tool is None:
        fallback = offered.get(DEFAULT_TOOL) or next(iter(offered.values()))
        return _render(
            request,
            project,
            tool=fallback,
            end_user=end_user,
            fields=form_fields(fallback),
            status=HTTPStatus.BAD_REQUEST,
            problem=f"No tool by that name: choose one of {', '.join(offered)}.",
        )  # never quoted
    arguments, errors, rows, texts = arguments_from(tool, request.POST)
    try:
        account = parse_account(end_user)
    except ApiError as refused:
        account, errors["end_user"] = None, refused.message
    result = None
    if not errors:
        assert account is not None  # parse_account only fails with an error recorded above
        _remember(request, project, account)
        context = Context(project=project, account=account, access=_access(request))
        result = run_tool(context=context, tool=tool, arguments=arguments)
        if result["status"] == 400 and result["answer"].get("field"):
            target = input_for(result["answer"]["field"], json_used={n for n, t in texts.items() if t})
            errors[target] = result["answer"]["message"]
        result["json"] = json.dumps(result["answer"], indent=2, ensure_ascii=False)
        result["view"] = readable(result["answer"], link=link_for(request, project, account))
    fields = with_errors(form_fields(tool, request.POST, rows=rows, json_text=texts), errors)
    status = result["status"] if result and result["status"] in (400, 403) else (400 if errors else 200)
    return _render(
        request,
        project,
        tool=tool,
        end_user=end_user,
        fields=fields,
        status=status,
        result=result,
        errors=errors,
        arguments=arguments,
        same_call=equivalents(request, tool=tool, account=end_user, arguments=arguments),
    )
