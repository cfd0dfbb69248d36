"""Vectors made again when the read's model changes (embeddings.MODEL_ID): each passage stores the model that
embedded it, and the beat finds the memories holding passages of another model (memory.tasks.reembed_stale).
Each passage gets what the read would give it now: its vector, its context mixed with the passage before it
in its thread, and a vector per sentence when it is long. Until then search still ranks it by the old
vectors, which an int8 model's differ from by a cosine of about .01.
"""

import numpy as np
from django.db import connection

from accounts.models import EndUser
from memory.model import embeddings

from ..models import Passage, PassageSentence
from ..selectors import Memory, named_rows
from .pieces import context_vector, sentences, titled

BATCH = 256  # passages a transaction: about a second of the model's time on one core


def stale_end_users(limit: int) -> list[int]:
    """End users with passages an earlier model embedded (a function across end users: ids only)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT end_user_id FROM twin_stale_vectors(%s, %s)", [embeddings.MODEL_ID, limit])
        return [row["end_user_id"] for row in named_rows(cursor)]


def reembed(memory: Memory, limit: int = BATCH) -> int:
    """Embed again the first `limit` passages (by thread, then place) that an earlier model embedded.
    Returns how many were written; a passage the read replaced meanwhile is left to it."""
    with memory.scoped():
        stale = list(
            memory.passages()
            .select_related(None)
            .exclude(model=embeddings.MODEL_ID)
            .order_by("thread_id", "seq")
            .only("thread_id", "seq", "title", "text", "author")[:limit]
        )
        before = {}  # thread -> (length, vector) of the passage before the batch's first of that thread
        for passage in stale:
            if passage.thread_id not in before:
                found = (
                    memory.passages()
                    .filter(thread_id=passage.thread_id, seq__lt=passage.seq, embedding__isnull=False)
                    .order_by("-seq")
                    .values_list("text", "embedding")
                    .first()
                )
                before[passage.thread_id] = (len(found[0]), np.asarray(found[1], np.float32)) if found else None
    if not stale:
        return 0
    said = [sentences(p.text, p.author) for p in stale]
    texts = [titled(p.title, p.text) for p in stale] + [line for lines in said for line in lines]
    vectors = iter(embeddings.embed(texts))  # each passage, then each long one's sentences, in one call
    for passage in stale:
        passage.embedding = next(vectors)
        passage.context_embedding = context_vector(before[passage.thread_id], len(passage.text), passage.embedding)
        passage.model = embeddings.MODEL_ID
        before[passage.thread_id] = (len(passage.text), passage.embedding)
    lines = {p.pk: [next(vectors) for _ in passage_lines] for p, passage_lines in zip(stale, said, strict=True)}
    with memory.scoped():  # one transaction
        # The end user's row first, as the read's writes take it: one memory's writes take turns.
        EndUser.objects.select_for_update(no_key=True).filter(pk=memory.end_user.pk).exists()
        here = set(memory.passages().filter(pk__in=[p.pk for p in stale]).values_list("pk", flat=True))
        kept = [p for p in stale if p.pk in here]
        Passage.objects.bulk_update(kept, ["embedding", "context_embedding", "model"])
        PassageSentence.objects.filter(passage__in=kept).delete()
        PassageSentence.objects.bulk_create(
            [PassageSentence(end_user_id=memory.end_user.pk, passage=p, embedding=v) for p in kept for v in lines[p.pk]]
        )
    return len(kept)
