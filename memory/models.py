"""What memory holds: items as added, their versions, and what the background read makes of them."""

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import Q
from django.db.models.functions import Length
from django.utils import timezone

from accounts.models import END_USER_ID_MAX, EndUser
from memory.model.embeddings import DIMENSIONS, MODEL_ID
from memory.model.half_text import HalfVectors
from twin.requestid import REQUEST_ID_MAX, request_id_or_blank

from .limits import ITEM_FIELD_MAX, ITEM_ID_MAX


@models.CharField.register_lookup
class Prefix(models.Lookup):
    """`path__prefix=…`: starts with, as PostgreSQL's starts_with (`^@`). Unlike LIKE it is LEAKPROOF, so under
    row-level security the planner still makes it a range on the (end_user, path) index, where LIKE would have
    it read every path of the memory."""

    lookup_name = "prefix"

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"{lhs} ^@ {rhs}", [*lhs_params, *rhs_params]


class Item(models.Model):
    """What a caller added. `version` counts edits; the read is current when `read_version == version`."""

    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="items")
    external_id = models.CharField(max_length=ITEM_ID_MAX)
    kind = models.CharField(max_length=16)
    text = models.TextField()
    at = models.DateTimeField()
    author = models.CharField(max_length=ITEM_FIELD_MAX, blank=True)
    role = models.CharField(max_length=ITEM_FIELD_MAX, blank=True)
    session = models.CharField(max_length=ITEM_FIELD_MAX, blank=True)
    title = models.CharField(max_length=ITEM_FIELD_MAX, blank=True)
    about = models.CharField(max_length=ITEM_FIELD_MAX, blank=True)
    expires = models.DateTimeField(null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    version = models.PositiveIntegerField(default=1)
    read_version = models.PositiveIntegerField(default=0)
    read_at = models.DateTimeField(null=True, blank=True)
    # The version whose read raised READ_RETRIES + 1 times, and why in one line (the exception's class and the
    # field or step, never the item's text): the sweep leaves it, and an edit (a new version) tries again.
    failed_version = models.PositiveIntegerField(default=0)
    failed_reason = models.CharField(max_length=200, blank=True)
    failed_at = models.DateTimeField(null=True, blank=True)
    # The version whose facts an import brought (memory/portability/): its read rebuilds passages, vectors and
    # statistics but extracts no facts. An edit makes a new version, whose read extracts as any other does.
    facts_imported_version = models.PositiveIntegerField(default=0)
    # What a duplicate would share with it (memory/duplicates.py): SHA-256 of its kind, author and normal text
    # (a message's session and time too). Null for items stored before it was kept, until their next edit.
    content_hash = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001 - null, not "": unhashed rows never collide in one_item_per_content
    # The id is the caller's: sent with the item, or used since to edit it. False for an id memory generated:
    # only such items are held unique by content, so a caller's own ids are never merged.
    caller_id = models.BooleanField(default=True)
    # The request (X-Request-Id) that added or last edited it: the background read reads items of many adds
    # at once, and its log lines and a failed read's reason name the requests they came from.
    request_id = models.CharField(max_length=REQUEST_ID_MAX, blank=True, default=request_id_or_blank)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # The text's length, kept by PostgreSQL: a project's read backlog sums it without reading the texts.
    characters = models.GeneratedField(expression=Length("text"), output_field=models.IntegerField(), db_persist=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["end_user", "external_id"], name="one_item_per_id"),
            # Two adds of one text without an id at the same moment: the index, not a read, decides which stores.
            models.UniqueConstraint(
                fields=["end_user", "content_hash"], name="one_item_per_content", condition=models.Q(caller_id=False)
            ),
        ]
        indexes = [
            # The sweep for items the read has not caught up with.
            models.Index(fields=["updated_at"], name="item_unread", condition=models.Q(read_at__isnull=True)),
            # A project's read backlog and queue: its end users' unread items (memory/fairness.py). The backlog,
            # counted before every add, reads only the index, never the items' rows.
            models.Index(
                fields=["end_user", "updated_at"],
                name="item_unread_by_end_user",
                condition=models.Q(read_at__isnull=True),
                include=["characters", "version", "failed_version"],
            ),
            # A duplicate's original, whoever named its id.
            models.Index(fields=["end_user", "content_hash"], name="item_content"),
        ]

    @property
    def is_read(self) -> bool:
        return self.read_version == self.version

    @property
    def is_failed(self) -> bool:
        return self.failed_version == self.version

    @property
    def has_imported_facts(self) -> bool:
        return self.facts_imported_version == self.version


class ItemVersion(models.Model):
    """An item's earlier text, kept when it was edited."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    text = models.TextField()
    fields = models.JSONField(default=dict)  # the other fields as they were
    replaced_at = models.DateTimeField(default=timezone.now)  # an import gives it as exported

    class Meta:
        constraints = [models.UniqueConstraint(fields=["item", "version"], name="one_row_per_version")]
        ordering = ["version"]


class Thread(models.Model):
    """A conversation session, one document, or a run of notes: `th_<16 hex>`."""

    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="threads")
    tid = models.CharField(max_length=19)
    source = models.CharField(max_length=32, default="memory")
    kind = models.CharField(max_length=16)
    key = models.CharField(max_length=ITEM_ID_MAX + 16)  # what groups its items: a session, or one item
    title = models.CharField(max_length=ITEM_FIELD_MAX, blank=True)
    next_seq = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    # Its passages' count and first and last moments, counted again whenever its passages change
    # (Memory.recount_threads): index.md, the overview, memory_ls and the console read these rather than every
    # passage of the memory, so drawing index.md does not slow as a memory grows (bench/README.md "Adding").
    passage_count = models.PositiveIntegerField(default=0)
    first_at = models.DateTimeField(null=True)
    last_at = models.DateTimeField(null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["end_user", "tid"], name="one_thread_per_tid"),
            models.UniqueConstraint(fields=["end_user", "kind", "key"], name="one_thread_per_key"),
        ]
        indexes = [models.Index(fields=["end_user", "-last_at"], name="thread_newest")]


class Passage(models.Model):
    """An addressed, ordered piece of a thread: `th_…/p_0001`, with the ids of the items it came from."""

    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="passages")
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="passages")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="passages")
    seq = models.PositiveIntegerField()
    path = models.CharField(max_length=200)
    kind = models.CharField(max_length=16)
    at = models.DateTimeField()
    expires = models.DateTimeField(null=True, blank=True)
    author = models.CharField(max_length=ITEM_FIELD_MAX, blank=True)
    role = models.CharField(max_length=ITEM_FIELD_MAX, blank=True)
    title = models.CharField(max_length=ITEM_FIELD_MAX, blank=True)
    about = models.CharField(max_length=ITEM_FIELD_MAX, blank=True)
    text = models.TextField()
    item_ids = ArrayField(models.CharField(max_length=ITEM_ID_MAX), default=list)
    # Half precision: the ranking is unchanged and a passage's two vectors then fit in its row (with the
    # table's toast_tuple_target, migration 0023), so search reads one page per candidate rather than
    # chasing TOAST.
    embedding = HalfVectors(dimensions=DIMENSIONS, null=True)
    # The passage read with the one before it in its thread: a turn's context, and its predecessor's
    # continuation (search reads the next passage's context vector as "this turn and what followed").
    context_embedding = HalfVectors(dimensions=DIMENSIONS, null=True)
    model = models.CharField(max_length=64, blank=True)  # the embedding model, so a better one can re-embed
    search = models.GeneratedField(
        expression=SearchVector("title", "author", "text", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["thread", "seq"], name="one_passage_per_seq")]
        indexes = [
            models.Index(fields=["end_user", "-at"], name="passage_latest"),
            models.Index(fields=["end_user", "path"], opclasses=["int8_ops", "text_pattern_ops"], name="passage_path"),
            GinIndex(fields=["search"], name="passage_fulltext"),
            # No vector index over everyone's passages: a memory is searched exactly, read whole through
            # end_user, until it is big enough for an HNSW index of its own (read/own_indexes.py; migration 0022).
            # Passages an earlier model embedded, by end user: empty but for a while after a model change
            # (memory/read/reembed.py), so finding them costs nothing the rest of the time.
            models.Index(fields=["end_user"], condition=~Q(model=MODEL_ID), name="passage_stale_model"),
        ]

    @property
    def passage_id(self) -> str:
        return f"{self.thread.tid}/p_{self.seq:04d}"


# A passage this long also gets a vector for each sentence: one vector over a paragraph or two blurs a line a
# question matches (and past the model's MAX_TOKENS does not see it). Shorter ones, nearly every turn of a
# chat (LoCoMo's longest is 444 characters), rank as well without them, at a fifth of the model's work. Search
# looks for sentences only in passages this long (memory/statements.py FEATURES).
SENTENCES_FROM_CHARS = 400


class PassageSentence(models.Model):
    """One sentence of a passage of SENTENCES_FROM_CHARS characters or more and several sentences, embedded
    alone, so a question matching one line of a long turn or paragraph still finds it."""

    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    passage = models.ForeignKey(Passage, on_delete=models.CASCADE, related_name="sentences")
    embedding = HalfVectors(dimensions=DIMENSIONS)

    class Meta:
        # No vector index: search reads a candidate's sentences by passage_id (its foreign key's index) and
        # never seeks sentences across the memory, so no write pays for such an index.
        indexes = []


class TermStat(models.Model):
    """How many of an end user's passages hold each lexeme: the document frequencies BM25 needs, kept as
    passages come and go so a search never counts them."""

    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    term = models.CharField(max_length=2048)
    df = models.IntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["end_user", "term"], name="one_stat_per_term")]


class MemoryStats(models.Model):
    """Totals BM25 needs: the number of passages and of their lexemes (for the average length)."""

    end_user = models.OneToOneField(EndUser, on_delete=models.CASCADE, related_name="+")
    passages = models.IntegerField(default=0)
    lexemes = models.BigIntegerField(default=0)


class WrittenIndex(models.Model):
    """index.md: what this memory holds, rewritten by the background read."""

    end_user = models.OneToOneField(EndUser, on_delete=models.CASCADE, related_name="written_index")
    text = models.TextField()
    updated_at = models.DateTimeField(auto_now=True)


class Fact(models.Model):
    """One dated statement about a subject, bi-temporal.

    World time: `valid_from` (the date the statement gives, else when it was said) to `valid_to` (when it
    says it ended, or the item's `expires`); a later value of a single-valued attribute ends it too, which
    query/history.py works out from the chain rather than storing, so a retraction can restore the value before.
    System time: `recorded_at` and `retracted_at` (an edit of its item, a correction, or a forget).
    `stated_at` is when it was said, so an as-of question never uses what was said later.
    """

    END = "end"  # a marker: the value (or, empty, whatever was current) stopped being true at valid_from

    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="facts")
    item = models.ForeignKey(Item, null=True, on_delete=models.SET_NULL, related_name="facts")
    subject = models.CharField(max_length=ITEM_FIELD_MAX)
    subject_key = models.CharField(max_length=ITEM_FIELD_MAX)
    attribute = models.CharField(max_length=64)
    value = models.CharField(max_length=ITEM_FIELD_MAX, blank=True)
    kind = models.CharField(max_length=8, default="value")  # "value" or END
    valid_from = models.DateTimeField()
    valid_to = models.DateTimeField(null=True, blank=True)
    stated_at = models.DateTimeField()
    recorded_at = models.DateTimeField(default=timezone.now)  # an import gives it as exported
    retracted_at = models.DateTimeField(null=True, blank=True)
    retraction = models.CharField(max_length=16, blank=True)  # edited, corrected (forgotten: before 0010)
    # The item whose correction retracted it: forgetting that item lets the value stand again.
    retracted_by = models.ForeignKey(Item, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    source_path = models.CharField(max_length=200, blank=True)
    source_passage = models.CharField(max_length=40, blank=True)
    # The source passage's place among its item's passages (1 = the first): what an export names, since a
    # passage id is rebuilt on import. An imported fact has it before its item's read places it in a passage.
    source_seq = models.PositiveIntegerField(null=True, blank=True)
    evidence = models.TextField(blank=True)

    class Meta:
        indexes = [models.Index(fields=["end_user", "subject_key", "attribute"], name="fact_subject")]


class UsageDay(models.Model):
    """Requests per project, day, tool, credential, surface and MCP protocol revision: what the console's
    Usage page shows."""

    project = models.ForeignKey("accounts.Project", on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    tool = models.CharField(max_length=64)
    credential = models.CharField(max_length=64)  # a key's prefix, an OAuth connection, or "local"
    surface = models.CharField(max_length=16)  # http, mcp, stdio, console
    revision = models.CharField(max_length=16, blank=True, default="")  # the MCP revision spoken; "" off MCP
    requests = models.IntegerField(default=0)
    errors = models.IntegerField(default=0)
    items_added = models.IntegerField(default=0)
    model_calls = models.IntegerField(default=0)
    # Calls refused over the credential's rate limit (429) before reaching a tool: counted in rows of their
    # own, tool "", never in requests or errors.
    throttled = models.IntegerField(default=0, db_default=0)
    duplicates_caught = models.IntegerField(default=0)  # items not stored again (memory/duplicates.py)
    secrets_caught = models.IntegerField(default=0)  # items refused, or fields redacted, for a secret
    # Calls by latency, a count per bucket of memory.usage.LATENCY_BUCKETS_MS (the last: slower than them all),
    # added to in the same upsert as the counts: the Usage page's p50 and p95, without a row per call.
    latency = ArrayField(models.IntegerField(), default=list, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "day", "tool", "credential", "surface", "revision"], name="one_usage_row"
            )
        ]


class RecentError(models.Model):
    """The last errors a project's callers met (the newest RECENT_ERRORS are kept)."""

    project = models.ForeignKey("accounts.Project", on_delete=models.CASCADE, related_name="+")
    at = models.DateTimeField(auto_now_add=True)
    tool = models.CharField(max_length=64)
    credential = models.CharField(max_length=64)
    surface = models.CharField(max_length=16)
    error = models.CharField(max_length=64)
    message = models.TextField()
    # Not a column: the credential's readable name, set on the rows the console's Usage page shows.
    label: str

    class Meta:
        indexes = [models.Index(fields=["project", "-at"], name="recent_error_latest")]


_RUNNING_IMPORT = ("queued", "checking", "storing")  # an import's states until it ends


class ImportJob(models.Model):
    """One import of an export file into one end user's memory (memory/portability/jobs.py): its state, its
    counts as it goes, and its answer. A project runs one import at a time (one_running_import).

    The end user is kept as the caller named them (`account`), not by key: the import makes a new one only
    when it stores, and a refused or undone import leaves none behind, while its job stays to say why."""

    QUEUED, CHECKING, STORING = _RUNNING_IMPORT
    DONE, REFUSED, FAILED = "done", "refused", "failed"
    RUNNING = _RUNNING_IMPORT

    project = models.ForeignKey("accounts.Project", on_delete=models.CASCADE, related_name="+")
    public_id = models.CharField(max_length=32, unique=True)  # the id a client is given: random, not counted
    account = models.CharField(max_length=END_USER_ID_MAX)
    made_end_user = models.BooleanField(default=False)  # the import made the end user: an undo erases them
    # Whose import it is on the Usage page, counted when it ends: the surface, and the key or connection.
    surface = models.CharField(max_length=16)
    api_key = models.ForeignKey("accounts.ApiKey", null=True, on_delete=models.SET_NULL, related_name="+")
    connection = models.ForeignKey("accounts.Connection", null=True, on_delete=models.SET_NULL, related_name="+")
    state = models.CharField(max_length=8, default=QUEUED)
    file = models.CharField(max_length=1024)  # the spooled file's path: deleted when the job ends
    items = models.IntegerField(null=True)  # item lines, once every line is checked
    checked = models.IntegerField(default=0)  # lines checked so far
    stored = models.IntegerField(default=0)  # item lines stored so far
    # The items this job added, by key, batch by batch in each batch's transaction: what an undo erases.
    # Emptied when the job ends.
    added = ArrayField(models.BigIntegerField(), default=list)
    answer = models.JSONField(null=True)  # done: the import's answer; refused or failed: the error's body
    status = models.IntegerField(null=True)  # the HTTP status that answer is given with
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True)
    finished_at = models.DateTimeField(null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project"], condition=Q(state__in=_RUNNING_IMPORT), name="one_running_import"
            )
        ]
