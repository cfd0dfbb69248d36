"""The only tenant-scoped reads: every memory query starts from a Memory, one end user of one project.

A Memory is built from the request Context, which comes from the credential, so no caller-given value can
widen it; services and tools take a Memory and query through it, never through the models directly.
"""

from django.db.models import QuerySet

from accounts.auth import Context
from accounts.models import EndUser

from .errors import CannotAnswer
from .models import Item, Passage, Thread, WrittenIndex


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
            raise CannotAnswer(
                "no_memory",
                f"End user {context.account!r} has no memory yet: nothing has been added for them.",
            )
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
