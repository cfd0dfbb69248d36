"""Every bound of the memory tools, defined once; schemas, validation, docs and tests import them."""

from datetime import UTC, datetime, timedelta

from twin.lines import LINE_BREAKERS as LINE_BREAKERS  # re-exported: memory's schemas and checks read it here

TEXT_MAX = 2_000  # query, pattern, question, task
NAME_MAX = 512  # names and paths
DATE_MAX = 40  # an ISO day or time
# The dates the stack can hold: Python's datetime and psycopg read no year outside 1 to 9999 in UTC (a time
# at 23:59 on 9999-12-31 at -10:00 is year 10000 in UTC, and could be stored but never read back), and real
# offsets run from -12:00 to +14:00.
DATE_EARLIEST = datetime(1, 1, 1, tzinfo=UTC)
DATE_LATEST = datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)
OFFSET_MIN, OFFSET_MAX = timedelta(hours=-12), timedelta(hours=14)
ITEM_TEXT_MAX = 100_000
ITEM_ID_MAX = 512
ITEM_FIELD_MAX = 512  # author, role, session, title, about
# A one-line field (an item's id, author, role, session, title, about; an id named to correct, version or
# forget) holds none of twin/lines.py's LINE_BREAKERS (control characters, line and paragraph separators,
# bidirectional controls), which break or reorder the line memory renders it on.
ONE_LINE = "one line"  # the bound a refusal names
# A key a caller chose (metadata's, an unknown field's) is named in a refusal or a field path only when it is
# plainly a name: any other (a line of markdown, a secret, a kilobyte) is named UNNAMED_KEY, never echoed.
PLAIN_KEY = r"^[A-Za-z_][A-Za-z0-9_]{0,31}$"
UNNAMED_KEY = "?"
ITEM_METADATA_MAX_BYTES = 16 * 1024
# How deeply any JSON a caller sends may nest arrays and objects (twin/json_limits.py): far more than any
# request or metadata needs, far less than the depth at which Python's json module overflows its stack.
JSON_DEPTH_MAX = 64
ITEMS_MIN, ITEMS_MAX = 1, 500
GREP_LIMIT_MAX, GREP_LIMIT_DEFAULT = 50, 50
AROUND_WIDTH_MAX, AROUND_WIDTH_DEFAULT = 5, 2
LATEST_K_MAX, LATEST_K_DEFAULT = 50, 10
SEARCH_HITS = 10
NEXT_TOP_MAX, NEXT_TOP_DEFAULT = 10, 3
FORGET_IDS_MAX = 500
# MCP resources (memory/resources.py): resources/list names index.md, the subject files and the newest
# passages, never a whole big memory (a passage beyond them is reached by its template or a tool); a page holds
# RESOURCES_PAGE of them, the rest follows by cursor. A completion answers at most COMPLETION_VALUES_MAX values,
# the MCP specification's own maximum.
RESOURCES_PASSAGES_MAX = 100
RESOURCES_SUBJECTS_MAX = 100
RESOURCES_PAGE = 50
COMPLETION_VALUES_MAX = 100

ITEM_KINDS = ("message", "document", "note")
DEFAULT_KIND = "note"

# An item whose read raises is read again this many times (with backoff) before it is marked failed, so one
# unreadable item can neither hold up its batch nor be retried forever.
READ_RETRIES = 3

# The HNSW graph's build parameters of a big memory's own vector index (read/own_indexes.py): pgvector's
# defaults, 16 links a node and 64 candidates weighed while building.
HNSW_LINKS, HNSW_BUILD_CANDIDATES = 16, 64

# How often memory_add stores again after losing a race to insert a new id (each retry finds more rows
# existing, so two are already rare).
ADD_ATTEMPTS = 3

WAIT_SECONDS = 20  # how long `wait: true` waits for the background read before answering anyway

# Export and import (memory/portability/, docs/export-format.md).
# An import's body is streamed to a temporary file, never held in memory, so it may be far larger than a JSON
# request (DATA_UPLOAD_MAX_MEMORY_SIZE, 64 MB): 2 GiB holds a memory of about a million items. The same bound
# holds for what a gzipped file expands to, so a small bomb cannot fill the disk or run for hours.
IMPORT_MAX_BYTES = 2 * 1024**3
# One line of an export (an item with its versions and facts) is read whole: no larger than a JSON body may be.
IMPORT_LINE_MAX_BYTES = 64 * 1024**2
# The first pass remembers a 16-byte digest of every id to refuse a repeated one: about 80 MB at this bound.
# A file is also admitted only if it fits the project's whole cap on queued read work (settings
# READ_BACKLOG_ITEMS, 200,000 by default, and READ_BACKLOG_CHARACTERS; memory/fairness.py): past it, 413. This
# bound holds the first pass's memory where an operator has raised the cap to a million items or more.
IMPORT_MAX_ITEMS = 1_000_000
IMPORT_BATCH = 1_000  # items stored per transaction: a failure loses at most one batch, and locks stay short
# What a gzipped file may expand to, read as it is decompressed: at most IMPORT_RATIO_MAX bytes out for each
# byte in, once past IMPORT_RATIO_FREE_BYTES (a small file compresses less than a big one, and a few
# megabytes cost nothing to read). A real export of varied text gzips 3 to 10 times; a file of one repeated
# line or of blank lines, a bomb, a thousand times: refused within seconds, not read for minutes.
IMPORT_RATIO_MAX = 100
IMPORT_RATIO_FREE_BYTES = 16 * 1024**2
# A refused import names this many bad lines (each by its first fault), then stops looking.
IMPORT_REFUSED_LINES = 100
# A version number an import may give an item. Versions are PostgreSQL integers (at most 2,147,483,647) and
# every edit adds one, so an item imported at this bound can still be edited a billion times: more than a
# client at the rate limits could send in a century. At the column's own bound, its next edit could not be
# stored.
VERSION_MAX = 1_000_000_000
# A fact's passage (its place among its item's passages): an item has at most as many passages as characters.
PASSAGE_PLACE_MAX = ITEM_TEXT_MAX
# A fact's stated_at, recorded_at and retracted_at, and a version's replaced_at, are moments that have
# happened: an import refuses one later than now by more than a clock's drift between two machines.
IMPORT_CLOCK_SKEW = timedelta(minutes=5)
# How long POST /v1/memory/import waits for its job before answering 202 with the job's address (as
# `wait: true` waits: holding no database connection, among the same half of a web process's threads).
IMPORT_WAIT_SECONDS = 20
# A job queued this long whose worker never started it (its message lost with the broker) is queued again
# when the project's next import arrives.
IMPORT_QUEUED_STALE_SECONDS = 3600
# Items read from the export's server-side cursor at a time, with their versions and facts: the export holds
# at most this many items' text in hand (200 x 100,000 characters), whatever the memory's size.
EXPORT_CHUNK = 200
# Exports streamed at once by one web process: each holds a database connection and a snapshot for as long
# as its client reads, so a third waits its turn (503) rather than take the pool's connections.
EXPORTS_AT_ONCE = 2
# What a busy export tells a client to wait: long enough for a small export to have freed its slot, not for
# a big one (which streams for minutes: docs/export-format.md "Size"), which the client then asks after
# again.
EXPORT_RETRY_AFTER_SECONDS = 30

# One slice of a project's background read (memory/fairness.py): at most this many items or characters, then
# the project goes back to the tail of the queue unless no other task waits. 128 chat turns take about a second
# on two cores, and a 200,000-character document a few, so another project's add waits that long at most per
# project ahead of it. The model sorts a slice's texts into batches of like length: 128 at a time waste less
# padding than 64 (bench/README.md "Adding").
READ_SLICE_ITEMS = 128
READ_SLICE_CHARACTERS = 200_000
