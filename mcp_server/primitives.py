"""MCP beyond tools: resources, resource templates, completion and prompts, for both eras (protocol.py routes
them and adds each era's envelope and caching hints).

What they offer is defined once, in memory/resources.py and memory/prompts.py; here it becomes JSON-RPC. A
resource is read through the credential's Memory handle (`memory_in_scope`), so it is the end user's file and
nothing else, and a read credential reads it; a prompt only asks the assistant to call the tools, so it
reaches no further than they do.
"""

from accounts.auth import Context
from accounts.errors import ApiError
from memory import prompts as prompt_registry
from memory import resources as resource_registry
from memory.errors import CannotAnswer, InvalidArguments
from memory.limits import NAME_MAX
from memory.selectors import memory_in_scope

from .jsonrpc import INVALID_PARAMS, INVALID_REQUEST, RpcError

RESOURCE_NOT_FOUND = "Resource not found"  # the 2026-07-28 revision's words, with -32602


def _refused(error: ApiError) -> RpcError:
    """A refusal as JSON-RPC, as a tool's is (protocol.tool_reply): bad arguments are Invalid params, a caller
    without the scope an Invalid request sent with its 403."""
    if isinstance(error, InvalidArguments):
        return RpcError(INVALID_PARAMS, error.message, error.as_dict())
    return RpcError(INVALID_REQUEST, error.message, error.as_dict(), error.status)


def _string(params: dict, name: str, field: str, *, empty: bool = False) -> str:
    """params[name], a string within NAME_MAX (empty only when `empty`), or -32602 naming `field`."""
    value = params.get(name)
    if not isinstance(value, str) or len(value) > NAME_MAX or (not value and not empty):
        raise RpcError(
            INVALID_PARAMS,
            f"params.{field} is required: a string of at most {NAME_MAX} characters.",
            {"error": "invalid_arguments", "field": field, "bound": NAME_MAX},
        )
    return value


def resources_list(context: Context, params: dict) -> dict:
    """resources/list: one page of the end user's files, and the cursor of the next."""
    try:
        with memory_in_scope(context) as memory:
            page, following = resource_registry.resource_page(memory=memory, cursor=params.get("cursor"))
    except InvalidArguments as bad:
        raise _refused(bad) from None
    except CannotAnswer:  # no memory yet: nothing to list
        page, following = [], None
    return {"resources": page, **({"nextCursor": following} if following else {})}


def templates_list(context: Context, params: dict) -> dict:
    """resources/templates/list: a passage's and a subject's URI, one page."""
    return {"resourceTemplates": [template.entry() for template in resource_registry.TEMPLATES]}


def resources_read(context: Context, params: dict) -> dict:
    """resources/read: the file as markdown, exactly as memory_read renders it; a URI that names nothing is
    -32602 Resource not found, its URI repeated only when it is plainly one (resources.shown_uri)."""
    uri = params.get("uri")
    try:
        with memory_in_scope(context) as memory:
            return {"contents": [resource_registry.resource_read(memory=memory, uri=uri)]}
    except CannotAnswer:
        shown = resource_registry.shown_uri(uri)
        data = {"error": "not_found", **({"uri": shown} if shown else {"field": "uri"})}
        raise RpcError(INVALID_PARAMS, RESOURCE_NOT_FOUND, data) from None


def _completion(values: list[str], total: int) -> dict:
    return {"completion": {"values": values, "total": total, "hasMore": total > len(values)}}


def complete(context: Context, params: dict) -> dict:
    """completion/complete: a resource template's argument from the end user's own paths and subjects; a
    prompt's arguments are the person's own words, so they complete to nothing."""
    ref, argument = params.get("ref"), params.get("argument")
    ref = ref if isinstance(ref, dict) else {}
    argument = argument if isinstance(argument, dict) else {}
    name = _string(argument, "name", "argument.name")
    value = _string(argument, "value", "argument.value", empty=True)
    if ref.get("type") == "ref/prompt":
        prompt = prompt_registry.BY_NAME.get(str(ref.get("name")))
        if prompt is None or name not in {a.name for a in prompt.arguments}:
            raise RpcError(INVALID_PARAMS, "No such prompt argument.", {"error": "invalid_arguments", "field": "ref"})
        return _completion([], 0)
    template = (
        resource_registry.TEMPLATES_BY_URI.get(str(ref.get("uri"))) if ref.get("type") == "ref/resource" else None
    )
    if template is None or name != template.argument:
        raise RpcError(
            INVALID_PARAMS,
            "ref names no resource template of this server, or argument.name none of its arguments: "
            "resources/templates/list lists them.",
            {"error": "invalid_arguments", "field": "ref" if template is None else "argument.name"},
        )
    try:
        with memory_in_scope(context) as memory:
            return _completion(*resource_registry.resource_complete(memory=memory, template=template, value=value))
    except CannotAnswer:
        return _completion([], 0)


def prompts_list(context: Context, params: dict) -> dict:
    """prompts/list: the prompts this credential is offered."""
    return {"prompts": [prompt.entry() for prompt in prompt_registry.prompts_for(context)]}


def prompts_get(context: Context, params: dict) -> dict:
    """prompts/get: the prompt filled with its arguments; a missing one is -32602 naming it."""
    try:
        return prompt_registry.prompt_get(context=context, name=params.get("name"), arguments=params.get("arguments"))
    except ApiError as refused:
        raise _refused(refused) from None
