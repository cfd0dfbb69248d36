"""The only tenant-scoped reads: every memory query starts from a Memory, one end user of one project.

A Memory is built from the request Context, which comes from the credential (or, in a task, from the end
user's id the task was queued with), so no caller-given value can widen it. Services, tools and tasks take
a Memory and read through it: its querysets are already scoped to the end user (refining them is fine), and
the SQL search ranks with runs here, scoped the same way. No other module names a memory model's manager to
read, or runs SQL on an end user's rows, but memory/project_selectors.py: the few reads that span end users
(a project's read queue, the console's counts per end user, the beat's upkeep).
"""

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.db import DataError, connection
from django.db.models import F, OuterRef, Prefetch, Q, QuerySet, Subquery

from accounts.auth import Context
from accounts.models import EndUser
from accounts.selectors import end_user_of_project
from accounts.services import end_user_get_or_create
from memory.model.half_text import half_text

from . import statements
from .errors import CannotAnswer, UnreadableItem
from .limits import DATE_EARLIEST, DATE_LATEST
from .models import SENTENCES_FROM_CHARS, Fact, Item, ItemVersion, Passage, PassageSentence, Thread, WrittenIndex
from .scope import ScopeConflict, scoped, scoped_to_account  # noqa: F401 (ScopeConflict: re-exported)


def named_rows(cursor) -> list[dict]:
    """The cursor's rows as dicts by column name: SQL results are read by name, never by position."""
    names = [column.name for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


@dataclass(frozen=True)
class TermStatistics:
    """What BM25 needs about a question in one memory (kept by read/stats.py as passages come and go)."""

    terms: list[str]  # the question's words, normalised as the passages' full text is
    passages: int  # how many passages the memory holds
    average_length: float  # lexemes per passage
    document_frequency: dict[str, int]  # term -> how many passages hold it


@dataclass(frozen=True)
class PassageFilters:
    """Which passages a search may return: a date window, a path prefix, and what had not expired by then."""

    before: datetime | None = None
    after: datetime | None = None
    scope: str = ""
    current_at: datetime | None = None  # leave out what had expired by then

    def sql(self, alias: str, *, in_a_thread: bool = False) -> tuple[str, dict]:
        """The WHERE clause on passage `alias` (the end user's own, always first) and its parameters.
        `in_a_thread`: for a passage found by its thread and place in it, beside one of the end user's, so of
        the same end user (and row-level security holds it to them all the same): without the end user, whom
        statistics taken before their memory was written make look rarer than a thread, the planner cannot
        look neighbours up through the end user's passages (each lookup read all of them)."""
        parts = [] if in_a_thread else [f"{alias}.end_user_id = %(end_user)s"]
        params: dict[str, datetime | str] = {}
        if self.before:
            parts.append(f"{alias}.at < %(before)s")
            params["before"] = self.before
        if self.after:
            parts.append(f"{alias}.at >= %(after)s")
            params["after"] = self.after
        if self.scope:
            # starts_with, not LIKE: it is LEAKPROOF, so row-level security leaves it to the path index
            parts.append(f"{alias}.path ^@ %(scope)s")
            params["scope"] = self.scope
        if self.current_at:
            parts.append(f"({alias}.expires IS NULL OR {alias}.expires > %(current_at)s)")
            params["current_at"] = self.current_at
        return " AND ".join(parts) or "TRUE", params


# The Passage fields a hit is loaded with, in the model's order (Model.from_db takes them so).
_HIT_FIELDS = [
    f.attname
    for f in Passage._meta.concrete_fields
    if f.attname not in ("embedding", "context_embedding", "model", "search")
]


def outside_the_dates(*columns: str) -> Q:
    """Rows with a time in any of `columns` outside the dates the stack can hold (limits.py): stored before
    dates were bounded, held by PostgreSQL but not readable by psycopg. Compared in SQL, as no such row can
    be loaded to look."""
    found = Q()
    for column in columns:
        found |= Q(**{f"{column}__gt": DATE_LATEST}) | Q(**{f"{column}__lt": DATE_EARLIEST})
    return found


# An item that cannot be loaded: a time of its own, or of one of its versions, outside the dates.
UNREADABLE_ITEM = outside_the_dates("at", "expires", "versions__replaced_at")


def no_memory(account: str) -> CannotAnswer:
    """The answer for an end user with nothing added yet (or everything forgotten)."""
    return CannotAnswer("no_memory", f"End user {account!r} has no memory yet: nothing has been added for them.")


class Memory:
    """One end user's memory."""

    def __init__(
        self, end_user: EndUser | None, *, find: Callable[[], EndUser | None] | None = None, account: str = ""
    ):
        """The memory of `end_user`; or, given None, of the end user `find` finds when the memory is first
        used: by its first statement, which scopes the transaction to them too (memory_in_scope), so a read
        may start work of its own before it (a search's question embeds meanwhile). An end user `find` does
        not find is no_memory for `account`."""
        self._end_user, self._find = end_user, find
        self._account = end_user.external_id if end_user is not None else account

    @property
    def end_user(self) -> EndUser:
        """The end user whose memory this is; for a memory found on first use, found now."""
        if self._end_user is None:
            assert self._find is not None  # a memory is made with its end user or with how to find them
            self._end_user = self._find()
            if self._end_user is None:
                raise no_memory(self._account)
        return self._end_user

    @classmethod
    def of_end_user(cls, end_user_id: int) -> "Memory | None":
        """The memory of the end user a task was queued for (tasks take ids); None when that end user has
        been erased since."""
        end_user = EndUser.objects.filter(pk=end_user_id).first()
        return cls(end_user) if end_user else None

    def is_empty(self) -> bool:
        """Nothing has been added (or all of it was forgotten)."""
        return not self.items().exists()

    def must_hold_items(self) -> None:
        """Raise no_memory when nothing has been added: how a service says that an empty memory cannot
        answer (a search asks only when it found nothing, sparing the round trip)."""
        if self.is_empty():
            raise no_memory(self.end_user.external_id)

    # ---- rows ------------------------------------------------------------------------------------------

    def items(self) -> QuerySet[Item]:
        """Everything added to this memory."""
        return Item.objects.filter(end_user=self.end_user)

    def unread_items(self, pks: list[int] | None = None) -> QuerySet[Item]:
        """The items whose read is behind their version (never read, or edited since) and has not failed at
        it, oldest first; only those among `pks` when given."""
        items = self.items() if pks is None else self.items().filter(pk__in=pks)
        # an item whose read failed at this version waits for an edit (read/failures.py)
        return items.exclude(read_version=F("version")).exclude(failed_version=F("version")).order_by("at", "pk")

    @contextlib.contextmanager
    def readable(self, fields: dict[str, str]):
        """Load the items of the external ids in `fields` ({id: the field that named it}) inside: a DataError
        met on one stored with a date outside the dates (UNREADABLE_ITEM) is answered UnreadableItem naming
        its field, never a 500. Any other DataError propagates. The look costs nothing until one is met."""
        try:
            yield
        except DataError:
            unreadable = set(
                self.items().filter(UNREADABLE_ITEM, external_id__in=list(fields)).values_list("external_id", flat=True)
            )
            if not unreadable:
                raise
            raise UnreadableItem(field=next(field for key, field in fields.items() if key in unreadable)) from None

    def item_versions(self, item: Item) -> QuerySet[ItemVersion]:
        """An item's earlier texts, oldest first."""
        return ItemVersion.objects.filter(item__end_user=self.end_user, item=item)

    def versions_of(self, item_pks: list[int]) -> QuerySet[ItemVersion]:
        """The earlier texts of the items `item_pks`, by item then oldest first (an export's chunk)."""
        return ItemVersion.objects.filter(item__end_user=self.end_user, item_id__in=item_pks).order_by(
            "item_id", "version"
        )

    def threads(self) -> QuerySet[Thread]:
        """The memory's threads: conversations, documents, runs of notes."""
        return Thread.objects.filter(end_user=self.end_user)

    def held_threads(self) -> QuerySet[Thread]:
        """The memory's threads that hold passages, each with their count and first and last moments."""
        return self.threads().filter(passage_count__gt=0)

    def recount_threads(self, thread_pks) -> None:
        """Count the passages of these threads again, with their first and last moments: after their passages
        changed, in the same transaction (the read, an erasure)."""
        with connection.cursor() as cursor:
            cursor.execute(
                statements.RECOUNT_THREADS, {"end_user": self.end_user.pk, "threads": sorted(set(thread_pks))}
            )

    def passages(self) -> QuerySet[Passage]:
        """The memory's passages, each with its thread."""
        # Vectors and the tsvector are for SQL to rank with; loading them into Python costs more than the rest.
        return (
            Passage.objects.filter(end_user=self.end_user)
            .select_related("thread")
            .defer("embedding", "context_embedding", "search")
        )

    def newest_threads(self, limit: int) -> QuerySet[Thread]:
        """The `limit` threads with the newest passages, newest first, each with its opening passage's text
        (opening): index.md's list."""
        # The opening is looked up for the listed threads only (PostgreSQL runs a subquery in the select list
        # after the sort and limit), by the (thread, seq) index: the thread is the memory's already, and with
        # an end user filter too the planner would walk every passage of the end user for each.
        opening = Passage.objects.filter(thread=OuterRef("pk")).order_by("seq").values("text")[:1]
        return self.held_threads().annotate(opening=Subquery(opening)).order_by("-last_at", "tid")[:limit]

    def passage_vectors(self, item_pks: list[int], model: str) -> QuerySet[Passage]:
        """The passages of the items `item_pks` embedded by `model`, with their vectors and their sentences'
        (in order): what an edit's read may keep."""
        return (
            Passage.objects.filter(end_user=self.end_user, item_id__in=item_pks, model=model, embedding__isnull=False)
            .only("title", "text", "author", "embedding")
            .prefetch_related(Prefetch("sentences", PassageSentence.objects.order_by("pk")))
        )

    def facts(self) -> QuerySet[Fact]:
        """Every fact recorded in this memory, retracted ones included (history shows them)."""
        return Fact.objects.filter(end_user=self.end_user)

    def facts_about(self, named: list[str], sources: list[str]) -> list[Fact]:
        """The facts about the subjects whose names hold one of the words `named` and those the passages at
        `sources` speak of. In SQL written out, since the ORM would take longer to compile this than PostgreSQL
        takes to run it."""
        return list(
            Fact.objects.raw(statements.FACTS_ABOUT, {"end_user": self.end_user.pk, "named": named, "sources": sources})
        )

    def subjects(self) -> dict[str, str]:
        """key -> display name of every subject with a fact (a forgotten fact's subject is not one)."""
        rows = self.facts().exclude(value="", kind="value")
        return dict(rows.values_list("subject_key", "subject").distinct())

    def written_index(self) -> str:
        """index.md as the last read wrote it; empty before the first."""
        found = WrittenIndex.objects.filter(end_user=self.end_user).first()
        return found.text if found else ""

    # ---- what search ranks with (query/retrieval.py) ---------------------------------------------------

    def term_statistics(self, query: str) -> TermStatistics:
        """In one round trip: the question's terms, normalised as the passages' full text is (English
        stemming, stop words out), and this memory's passage count, average lexemes per passage and the
        document frequency of each term."""
        with connection.cursor() as cursor:
            cursor.execute(statements.TERM_STATISTICS, {"query": query, "end_user": self.end_user.pk})
            rows = named_rows(cursor)
        if not rows:
            return TermStatistics([], 0, 1.0, {})
        passages, lexemes = rows[0]["passages"], rows[0]["lexemes"]
        return TermStatistics(
            [r["term"] for r in rows],
            passages,
            lexemes / passages if passages else 1.0,
            {r["term"]: r["df"] for r in rows},
        )

    def text_candidates(self, terms: list[str], filters: PassageFilters, limit: int) -> list[int]:
        """Ids of the `limit` passages that best match any of `terms` (normalised lexemes) in full text."""
        where, params = filters.sql("p")
        with connection.cursor() as cursor:
            cursor.execute(
                statements.BY_TEXT.format(p=where, n=int(limit)),
                {**params, "end_user": self.end_user.pk, "tsq": statements.tsquery(terms)},
            )
            return [row["id"] for row in named_rows(cursor)]

    def candidate_features(
        self, text_ids: list[int], vector: np.ndarray, terms: list[str], filters: PassageFilters, nearest: int
    ) -> list[dict]:
        """The candidates: `text_ids`, the `nearest` passages to `vector`, and their neighbours either side
        in their threads (those `filters` let through), each with what search scores it on: id, thread_id,
        seq, day (YYYY-MM-DD), author and about (lower case), characters, lexemes, cos_t, cos_prev, cos_next,
        maxsent, and tf (each of `terms` the passage holds: how often)."""
        where, params = filters.sql("p")
        n_filter, _ = filters.sql("n", in_a_thread=True)
        with connection.cursor() as cursor:
            nearest_sql = statements.BY_VECTOR.format(p=where, n=int(nearest))
            sql = statements.FEATURES.format(nearest=nearest_sql, n_filter=n_filter)
            # the question as halfvec text through half_text, far quicker than pgvector's float text
            cursor.execute(
                sql,
                {
                    **params,
                    "end_user": self.end_user.pk,
                    "q": half_text(vector),
                    "ids": text_ids,
                    "terms": terms,
                    "sentences_from": SENTENCES_FROM_CHARS,
                },
            )
            rows = named_rows(cursor)
        for row in rows:
            row["tf"] = statements.term_counts(row.pop("tf_text"))
        return rows

    def hits(self, ids: list[int]) -> dict[int, Passage]:
        """id -> passage of those of `ids` still there (a forget may have committed since they were ranked),
        each with its thread's tid, as the memory's queryset would load them; what a hit does not show loads
        when asked for."""
        if not ids:
            return {}
        with connection.cursor() as cursor:
            cursor.execute(statements.HITS, {"end_user": self.end_user.pk, "ids": ids})
            rows = named_rows(cursor)
        passages = {}
        for row in rows:
            row["end_user_id"] = self.end_user.pk
            passage = Passage.from_db(connection.alias, _HIT_FIELDS, [row[name] for name in _HIT_FIELDS])
            passage.thread = Thread.from_db(
                connection.alias, ["id", "end_user_id", "tid"], [row["thread_id"], self.end_user.pk, row["tid"]]
            )
            passages[passage.pk] = passage
        return passages

    def candidate_plans(
        self, terms: list[str], vector: np.ndarray, filters: PassageFilters, limit: int
    ) -> dict[str, str]:
        """How the database finds the candidates: EXPLAIN ANALYZE of each source, by name (the text source
        only when there are terms to match, as in search)."""
        where, params = filters.sql("p")
        params.update(end_user=self.end_user.pk, tsq=statements.tsquery(terms), q=half_text(vector))
        sources = {"text": statements.BY_TEXT} if terms else {}
        plans = {}
        with connection.cursor() as cursor:
            for source, sql in {**sources, "vector": statements.BY_VECTOR}.items():
                cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql.format(p=where, n=int(limit)), params)
                plans[source] = "\n".join(row["QUERY PLAN"] for row in named_rows(cursor))
        return plans

    def scoped(self):
        """This memory's scope for a transaction (see `scoped`)."""
        return scoped(self.end_user.project_id, self.end_user.pk)


@contextlib.contextmanager
def memory_in_scope(context: Context) -> Iterator[Memory]:
    """A read's memory: the context's end user's, inside one transaction scoped to them (see `scoped`), so
    everything the read sees is theirs and of one moment. An OAuth connection names its end user; a key names
    an account, found and scoped by the memory's first statement, in one round trip (scope.scoped_to_account).
    An end user never written to is no_memory, before any memory row is read."""
    if context.end_user is not None:
        with scoped(context.project.pk, context.end_user.pk):
            yield Memory(context.end_user)
        return
    with scoped_to_account(context.project.pk, context.account) as find:
        yield Memory(None, find=find, account=context.account)


def memory_to_write(context: Context, *, create: bool) -> Memory:
    """A write's memory: the context's end user's, found or, with `create` (an add), made on first write.
    A write opens its own transactions, each scoped by `Memory.scoped()`: an add commits before it waits for
    its read. An end user never written to, when not created, raises no_memory."""
    end_user = context.end_user
    if end_user is None:
        find = end_user_get_or_create if create else end_user_of_project
        end_user = find(project=context.project, external_id=context.account)
    if end_user is None:
        raise no_memory(context.account)
    return Memory(end_user)
