"""THE tool registry: each tool defined once.

Name, title, annotations, the description a client shows, the input schema with its bounds and defaults,
and the service function. The /v1/memory/<name> routes, MCP tools/list and tools/call, the stdio server, the
console's playground and the OpenAPI schema are all derived from these definitions, so a bound lives here
(from limits.py, through schema.py) and nowhere else. A call of a tool goes through dispatch.py.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from accounts.auth import Context
from memory.routes import answers, read_answers

from . import services
from .connectors import how_they_work, lessons, recall
from .connectors import next as next_steps
from .limits import (
    AROUND_WIDTH_DEFAULT,
    AROUND_WIDTH_MAX,
    FORGET_IDS_MAX,
    GREP_LIMIT_DEFAULT,
    GREP_LIMIT_MAX,
    ITEM_ID_MAX,
    ITEM_TEXT_MAX,
    ITEMS_MAX,
    ITEMS_MIN,
    LATEST_K_DEFAULT,
    LATEST_K_MAX,
    NAME_MAX,
    NEXT_TOP_DEFAULT,
    NEXT_TOP_MAX,
)
from .query import browse, history, search
from .schema import ITEM_SCHEMA, READ_ONLY, WRITES, integer, line, text
from .validation import date_schema


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    properties: dict
    run: Callable[..., dict]  # the service: keyword arguments `memory` and the validated arguments
    required: tuple[str, ...] = ()
    annotations: dict = field(default_factory=lambda: dict(READ_ONLY))
    writes: bool = False  # needs write access; opens its own transactions (services.py)
    creates_memory: bool = False  # a write that may create the end user; any other call needs one to exist
    mcp: bool = True  # False: an HTTP-only route (forget, correct, versions)
    local_only: bool = False  # listed by the local stdio server only; no HTTP route
    answer_schema: dict | None = None  # what it answers, for the OpenAPI schema (memory/routes/answers.py)

    @property
    def route(self) -> str:
        return self.name.removeprefix("memory_")

    @property
    def input_schema(self) -> dict:
        schema = {"type": "object", "properties": self.properties, "additionalProperties": False}
        if self.required:
            schema["required"] = list(self.required)
        return schema

    def defaults(self) -> dict:
        return {name: spec["default"] for name, spec in self.properties.items() if "default" in spec}


SAVE_POLICY = (
    "Save to this person's long-term memory (twin memory), which their other apps read too. Call this on your "
    "own, without being asked, on every turn where they say anything new: about themselves, their work, or the "
    "people, places, projects and things around them - preferences, facts, opinions, decisions, plans, dates, "
    "names and numbers, small details and passing remarks. Also save what was asked, tried, decided or built "
    "together, and why. When in doubt, save. One fact per item, as a note, in their words; several items in "
    "one call is fine. Reuse an item's id to correct it; set expires for what stops being true. Never save "
    "secrets, passwords, keys or payment details, or your own suggestions as facts about them."
)

TOOLS: list[Tool] = [
    Tool(
        name="memory_search",
        title="Search memory",
        description="What memory holds for a question: what is known, dated facts and whole passages, each with "
        "its address. The default first lookup. Can make one model call. Same as /v1/memory/search.",
        properties={
            "query": text("The question, in plain words. 1 to 2,000 characters."),
            "before": date_schema("Only memory from before this day. The question is asked as of it."),
            "after": date_schema("Only memory from this day on. Returns a ranked list rather than the brief."),
            "scope": text(
                "A path prefix to search under, such as passages/memory/documents. Returns a ranked list.", NAME_MAX, 0
            ),
        },
        required=("query",),
        run=search.memory_search,
        answer_schema=read_answers.SEARCH_ANSWER,
    ),
    Tool(
        name="memory_grep",
        title="Find exact text",
        description="Exact substring match, for a quoted phrase that similarity would blur. Case is ignored. "
        "Makes no model call. Same as /v1/memory/grep.",
        properties={
            "pattern": text("The phrase to find. 1 to 2,000 characters."),
            "scope": text("A path prefix to look under.", NAME_MAX, 0),
            "limit": integer("How many matches to return. 1 to 50, default 50.", 1, GREP_LIMIT_MAX, GREP_LIMIT_DEFAULT),
        },
        required=("pattern",),
        run=browse.memory_grep,
        answer_schema=read_answers.GREP_ANSWER,
    ),
    Tool(
        name="memory_read",
        title="Read a memory file",
        description="One file by exact path. A missing path answers with its siblings. Makes no model call. "
        "Same as /v1/memory/read.",
        properties={"path": text("A path a result gave you, such as a hit's path.", NAME_MAX)},
        required=("path",),
        run=browse.memory_read,
        answer_schema=read_answers.READ_ANSWER,
    ),
    Tool(
        name="memory_ls",
        title="List memory files",
        description="The children of one directory, so a caller can see the shape before reading. Directories "
        "end in /. Makes no model call. Same as /v1/memory/ls.",
        properties={"path": {**text('The directory. Default "", the top.', NAME_MAX, 0), "default": ""}},
        run=browse.memory_ls,
        answer_schema=read_answers.LS_ANSWER,
    ),
    Tool(
        name="memory_around",
        title="Read around a passage",
        description="The passages either side of one, in its own thread. Addressed, never ranked. Makes no "
        "model call. Same as /v1/memory/around.",
        properties={
            "passage_id": text("A passage id from a result, such as th_8b5e5d4c8946d815/p_0001.", NAME_MAX),
            "width": integer(
                "How many passages on each side. 1 to 5, default 2.", 1, AROUND_WIDTH_MAX, AROUND_WIDTH_DEFAULT
            ),
        },
        required=("passage_id",),
        run=browse.memory_around,
        answer_schema=read_answers.AROUND_ANSWER,
    ),
    Tool(
        name="memory_history",
        title="History of a value",
        description="The bi-temporal chain for one subject: what was true, and when it stopped being. Needs the "
        "conversation to have been read in the background. Makes no model call. Same as /v1/memory/history.",
        properties={
            "subject": text(
                "The subject, such as Alice Chen. A miss answers with the nearest recorded subjects.", NAME_MAX
            ),
            "attribute": text("One attribute, such as home_city.", NAME_MAX),
        },
        required=("subject",),
        run=history.memory_history,
        answer_schema=read_answers.HISTORY_ANSWER,
    ),
    Tool(
        name="memory_latest",
        title="Latest memories",
        description='The most recent passages, newest first. Ordered, never ranked: the lane for "what happened '
        'last", which a similarity search cannot answer. Makes no model call. Same as /v1/memory/latest.',
        properties={
            "k": integer("How many passages. 1 to 50, default 10.", 1, LATEST_K_MAX, LATEST_K_DEFAULT),
            "place": {
                **text(
                    "A place to narrow to: either segment of a passage path, such as memory or "
                    'documents. Default "", everywhere. A place that holds nothing answers with the '
                    "places that exist.",
                    NAME_MAX,
                    0,
                ),
                "default": "",
            },
            "after": date_schema("Only passages from this day on."),
            "before": date_schema("Only passages from before this day."),
        },
        run=browse.memory_latest,
        answer_schema=read_answers.LATEST_ANSWER,
    ),
    Tool(
        name="memory_overview",
        title="What memory holds",
        description="What this memory holds: its shape, its counts, and its written index. The first call a "
        "model that has never looked should make. Makes no model call. Same as /v1/memory/overview.",
        properties={},
        run=browse.memory_overview,
        answer_schema=read_answers.OVERVIEW_ANSWER,
    ),
    # The local stdio server's four tools for connector data (no HTTP route; /v1/mcp never lists them).
    Tool(
        name="memory_recall",
        title="Recall for a question",
        description="The brief for a question: records, worked-out lines and passages, as one block of text, "
        "with enough, the model's estimate that memory holds the answer. With OPENROUTER_API_KEY set, makes one "
        "to seven model calls: one, and up to seven with deep.",
        properties={
            "question": text("The question. 1 to 2,000 characters."),
            "as_of": date_schema("The day the question is asked as of. Nothing said after it is used."),
            "deep": {
                "type": "boolean",
                "default": False,
                "description": "Follow the names in what was kept when memory is thin. Up to six more model "
                "calls and several seconds. Default false.",
            },
        },
        required=("question",),
        local_only=True,
        run=recall.memory_recall,
    ),
    Tool(
        name="memory_lessons",
        title="Lessons from past attempts",
        description="What past attempts at a task like this one taught. Makes no model call.",
        properties={"task": text("The task. 1 to 2,000 characters.")},
        required=("task",),
        local_only=True,
        run=lessons.memory_lessons,
    ),
    Tool(
        name="memory_how_they_work",
        title="How they work",
        description="The steps one person takes before an action, and the voice they write in. Addressed by a "
        "person, not ranked. Makes no model call.",
        properties={
            "who": text("The person.", NAME_MAX),
            "surface": {
                **text(
                    'Where the answer is for, such as a channel or a repository. Default "", the '
                    "surface they write on most.",
                    NAME_MAX,
                    0,
                ),
                "default": "",
            },
        },
        required=("who",),
        local_only=True,
        run=how_they_work.memory_how_they_work,
    ),
    Tool(
        name="memory_next",
        title="What they do next",
        description="What this person usually does next, from what they have just been doing. A guess with "
        "backed_off: true is the person's base rate, not a prediction from context. Makes no model call.",
        properties={
            "who": {**text('The person. Default "", the memory\'s owner.', NAME_MAX, 0), "default": ""},
            "top": integer("How many guesses. 1 to 10, default 3.", 1, NEXT_TOP_MAX, NEXT_TOP_DEFAULT),
        },
        local_only=True,
        run=next_steps.memory_next,
    ),
    Tool(
        name="memory_add",
        title="Save to memory",
        description=SAVE_POLICY,
        properties={
            "items": {
                "type": "array",
                "minItems": ITEMS_MIN,
                "maxItems": ITEMS_MAX,
                "items": ITEM_SCHEMA,
                "description": "1 to 500 items, each as /v1/memory/add takes it: text, kind, id, at, "
                "author, role, session, title, about, expires and metadata.",
            },
            "wait": {
                "type": "boolean",
                "default": False,
                "description": "Answer once the items are searchable, rather than a moment before. Default false.",
            },
        },
        required=("items",),
        annotations=WRITES,
        writes=True,
        creates_memory=True,
        run=services.memory_add,
        answer_schema=answers.ADD_ANSWER,
    ),
    # HTTP-only routes: they stay on the customer's backend, never offered to a model.
    Tool(
        name="memory_forget",
        title="Forget",
        description="Erase items by id, or every item under a path, or the whole end user (`all: true`). "
        "Everything derived from them goes too. HTTP only.",
        properties={
            "ids": {
                "type": "array",
                "minItems": 1,
                "maxItems": FORGET_IDS_MAX,
                "items": line("An item id.", ITEM_ID_MAX),
                "description": "Item ids to erase.",
            },
            "path": text("A passage file or a directory of them, such as passages/memory/notes/.", NAME_MAX),
            "all": {"type": "boolean", "default": False, "description": "Erase this end user's whole memory."},
        },
        annotations={**WRITES, "destructiveHint": True},
        writes=True,
        mcp=False,
        run=lambda *, memory, ids=None, path=None, all=False: services.memory_forget(
            memory=memory, ids=ids, path=path, everything=all
        ),
        answer_schema=answers.FORGET_ANSWER,
    ),
    Tool(
        name="memory_correct",
        title="Correct an item",
        description="Fix an item's text by id, keeping the old text as a version. HTTP only.",
        properties={"id": line("The item's id.", ITEM_ID_MAX), "text": text("The corrected text.", ITEM_TEXT_MAX)},
        required=("id", "text"),
        annotations=WRITES,
        writes=True,
        mcp=False,
        run=services.memory_correct,
        answer_schema=answers.CORRECT_ANSWER,
    ),
    Tool(
        name="memory_versions",
        title="An item's versions",
        description="An item's current text and its earlier versions, oldest first. HTTP only.",
        properties={"id": line("The item's id.", ITEM_ID_MAX)},
        required=("id",),
        mcp=False,
        run=services.memory_versions,
        answer_schema=read_answers.VERSIONS_ANSWER,
    ),
]

BY_NAME = {tool.name: tool for tool in TOOLS}


def mcp_tools(context: Context) -> list[Tool]:
    """The tools /v1/mcp lists for this access, in the fixed order above."""
    return [t for t in TOOLS if t.mcp and not t.local_only and (context.can_write or not t.writes)]


def stdio_tools(context: Context) -> list[Tool]:
    """The tools the local stdio server lists: the read tools, the four for connector data, and memory_add
    when started with --writes."""
    return [t for t in TOOLS if t.mcp and (context.can_write or not t.writes)]
