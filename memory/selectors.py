"""The only tenant-scoped reads: every memory query starts from a Memory, one end user of one project.

A Memory is built from the request Context, which comes from the credential, so no caller-given value can
widen it; services and tools take a Memory and query through it, never through the models directly.
"""

import contextlib

from django.db import connection, transaction
from django.db.models import QuerySet

from accounts.auth import Context
from accounts.models import EndUser

from .errors import CannotAnswer
from .models import Item, Passage, Thread, WrittenIndex


def no_memory(context: Context) -> CannotAnswer:
    """The answer for an end user with nothing added yet."""
    return CannotAnswer("no_memory",
                        f"End user {context.account!r} has no memory yet: nothing has been added for them.")


class Memory:
    """One end user's memory."""

    def __init__(self, end_user: EndUser):
        self.end_user = end_user

    @classmethod
    def of(cls, context: Context, *, create: bool = False) -> "Memory | None":
        """The memory the context reaches; None when that end user has never been written to."""
        end_user = context.end_user(create=create)
        return cls(end_user) if end_user else None

    @classmethod
    def required(cls, context: Context) -> "Memory":
        """The memory the context reaches, or CannotAnswer when there is none yet."""
        memory = cls.of(context)
        if memory is None or not memory.items().exists():
            raise no_memory(context)
        return memory

    def items(self) -> QuerySet[Item]:
        return Item.objects.filter(end_user=self.end_user)

    def threads(self) -> QuerySet[Thread]:
        return Thread.objects.filter(end_user=self.end_user)

    def passages(self) -> QuerySet[Passage]:
        # Vectors and the tsvector are for SQL to rank with; loading them into Python costs more than the rest.
        return (Passage.objects.filter(end_user=self.end_user).select_related("thread")
                .defer("embedding", "context_embedding", "search"))

    def written_index(self) -> str:
        found = WrittenIndex.objects.filter(end_user=self.end_user).first()
        return found.text if found else ""

    def scoped(self):
        """This memory's scope for a transaction (see `scoped`)."""
        return scoped(self.end_user.project_id, self.end_user.pk)


@contextlib.contextmanager
def memory_in_scope(context: Context, *, create: bool = False):
    """The memory the context reaches, in a transaction scoped to it (see `scoped`): tool dispatch's way in.

    The end user is found, or with `create` made, before the scope opens (accounts' tables have none); one
    never written to raises CannotAnswer as Memory.required does, before any memory row is read.
    """
    end_user = context.end_user(create=create)
    if end_user is None:
        raise no_memory(context)
    with scoped(context.project.pk, end_user.pk):
        yield Memory.of(context, create=True) if create else Memory.required(context)


class ScopeConflict(RuntimeError):
    """A scope opened inside another one's transaction: one transaction serves one scope."""


_SET_SCOPE = "SELECT set_config('twin.project', %s, true), set_config('twin.end_user', %s, true)"
_CURRENT_SCOPE = ("SELECT coalesce(current_setting('twin.project', true), '') AS project, "
                  "coalesce(current_setting('twin.end_user', true), '') AS end_user")


@contextlib.contextmanager
def scoped(project_id: int, end_user_id: int | None = None):
    """A transaction scoped to one project and, given one, one end user: the only place the scope is set.

    PostgreSQL's row-level security on the memory tables (memory/migrations/0008) shows and accepts only the
    rows of that scope, whatever a query forgets to filter. The scope is set first thing in the transaction
    and for it alone (set_config(…, true)): a connection handed back, or to the next caller of a pool,
    carries none. Inside the same scope's transaction, this is a savepoint; inside a transaction of no
    scope, it scopes the block and clears the scope after it; inside another scope, ScopeConflict.
    """
    wanted = {"project": str(int(project_id)), "end_user": "" if end_user_id is None else str(int(end_user_id))}
    nested = connection.in_atomic_block
    with transaction.atomic():
        outer = _current_scope() if nested else {"project": "", "end_user": ""}
        if outer == wanted:
            yield
            return
        if outer["project"]:
            raise ScopeConflict(f"Scope {wanted} asked for inside the transaction of scope {outer}.")
        with connection.cursor() as cursor:
            cursor.execute(_SET_SCOPE, [wanted["project"], wanted["end_user"]])
        yield
        if nested:  # the outer transaction goes on: it leaves the block as unscoped as it came in
            with connection.cursor() as cursor:
                cursor.execute(_SET_SCOPE, ["", ""])


def _current_scope() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(_CURRENT_SCOPE)
        return dict(zip([column.name for column in cursor.description], cursor.fetchone()))
