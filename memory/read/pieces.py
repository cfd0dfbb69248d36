"""What an item becomes before the read writes it: its pieces (the passages to be, a document cut at
paragraph bounds), the text the model reads for each, the sentences of a long one, and how their vectors are
made: each passage's own, its context (mixed with the passage before it) and its sentences', with an edited
item keeping the vectors of the passages that read the same. The read's steps are in pipeline.py."""

import re
from dataclasses import dataclass, field

import numpy as np

from memory.model import embeddings

from ..models import SENTENCES_FROM_CHARS, Item
from ..selectors import Memory
from .cutting import cut

_SENTENCE_BOUNDS = re.compile(r"(?<=[.!?])\s+|\s*\[|\]\s*")
SENTENCE_MIN_CHARS = 4  # shorter pieces ("Ok.", "Hi!") carry nothing a question could match


@dataclass(eq=False)
class Piece:
    """One passage to be, with what its vectors are made from."""

    text: str  # as stored
    embed_text: str  # with the item's title, as embedded
    # The passage before it in its thread: a piece of this read, or (its length, its vector) as stored.
    previous: "Piece | tuple[int, np.ndarray] | None"
    sentences: list[str] = field(default_factory=list)
    vectors: dict = field(default_factory=dict)


def sentences(text: str, author: str) -> list[str]:
    """The sentences of a long passage of several (image captions apart), each led by its speaker; none for
    a short one, whose own vector is as near a question about one of its lines (bench/README.md "Adding")."""
    if len(text) < SENTENCES_FROM_CHARS:
        return []
    speaker = f"{author}: " if author else ""
    body = text[len(speaker) :] if speaker and text.startswith(speaker) else text
    parts = [p.strip() for p in _SENTENCE_BOUNDS.split(body) if len(p.strip()) >= SENTENCE_MIN_CHARS]
    return [speaker + p for p in parts] if len(parts) > 1 else []


def titled(title: str, text: str) -> str:
    """A passage as the model reads it: its item's title, then its text."""
    return f"{title}\n{text}" if title else text


def context_vector(previous: tuple[int, np.ndarray] | None, length: int, own: np.ndarray) -> np.ndarray:
    """The passage read with the one before it ((its length, its vector)): the mean of the two vectors,
    weighed by their lengths, as mean pooling over both texts at once weighs their tokens. Held out on
    LoCoMo it ranks as embedding the two texts together did (bench/README.md "Adding"), for no second pass
    through the model."""
    if previous is None:
        return own
    mixed = previous[0] * previous[1] + length * own
    return mixed / max(float(np.linalg.norm(mixed)), 1e-12)


def pieces_of(item: Item) -> list[Piece]:
    """The passages the item becomes, each linked to the one before it within the item (the first is
    linked to what comes before the item when the slice is written: pipeline._link)."""
    texts = cut(item.text) if item.kind == "document" else [item.text.strip() or item.text]
    pieces: list[Piece] = []
    for text in texts:
        pieces.append(
            Piece(text, titled(item.title, text), pieces[-1] if pieces else None, sentences(text, item.author))
        )
    return pieces


def context_of(piece: Piece) -> np.ndarray:
    """The piece's context vector, from its own and the passage's before it (a piece of this read, or as stored)."""
    before = piece.previous
    if isinstance(before, Piece):
        before = (len(before.text), before.vectors["text"])
    return context_vector(before, len(piece.text), piece.vectors["text"])


def reuse_vectors(memory: Memory, work: list[tuple[Item, list[Piece]]]) -> None:
    """Give the pieces of edited items the vectors their passages had, where the passage reads the same: an
    edit of one paragraph of a long document costs one passage's embedding, not the document's."""
    edited = [item.pk for item, _ in work if item.read_version]
    if not edited:
        return
    earlier = {}
    for passage in memory.passage_vectors(edited, embeddings.MODEL_ID):
        said = [np.asarray(s.embedding, np.float32) for s in passage.sentences.all()]
        if len(said) == len(sentences(passage.text, passage.author)):  # read under the same rule
            own = np.asarray(passage.embedding, np.float32)
            earlier[passage.author, titled(passage.title, passage.text)] = (own, said)
    for item, pieces in work:
        for p in pieces:
            if (item.author, p.embed_text) in earlier:
                p.vectors["text"], p.vectors["sentences"] = earlier[item.author, p.embed_text]
