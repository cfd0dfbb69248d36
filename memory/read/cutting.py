"""Cuts a document into passages of about a screen, at paragraph bounds."""

import re

TARGET_CHARS = 1_200
MAX_CHARS = 2_000

_PARAGRAPHS = re.compile(r"\n\s*\n")
_SENTENCES = re.compile(r"(?<=[.!?])\s+")


def _split_long(paragraph: str) -> list[str]:
    """A paragraph longer than a screen, cut at sentence bounds (or hard, for text with none)."""
    pieces, current = [], ""
    for sentence in _SENTENCES.split(paragraph):
        while len(sentence) > MAX_CHARS:
            if current:
                pieces.append(current)
                current = ""
            pieces.append(sentence[:MAX_CHARS])
            sentence = sentence[MAX_CHARS:]
        if current and len(current) + 1 + len(sentence) > TARGET_CHARS:
            pieces.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}" if current else sentence
    if current:
        pieces.append(current)
    return pieces


def cut(text: str) -> list[str]:
    """Passages of up to about TARGET_CHARS, never over MAX_CHARS, whole paragraphs where they fit."""
    paragraphs = [p.strip() for p in _PARAGRAPHS.split(text.strip()) if p.strip()]
    passages, current = [], ""
    for paragraph in paragraphs:
        for piece in _split_long(paragraph) if len(paragraph) > MAX_CHARS else [paragraph]:
            if current and len(current) + 2 + len(piece) > TARGET_CHARS:
                passages.append(current)
                current = piece
            else:
                current = f"{current}\n\n{piece}" if current else piece
    if current:
        passages.append(current)
    return passages or [text.strip()]
