"""Addresses: thread ids, passage ids, subject keys and the file paths memory is browsed by."""

import hashlib
import re

from django.utils.text import slugify

PASSAGE_ID = re.compile(r"^(th_[0-9a-f]{16})/p_(\d{4,})$")
PLURAL = {"message": "messages", "document": "documents", "note": "notes"}
INDEX_PATH = "index.md"
THREAD_ID_HEX = 16  # hex digits of a thread id (th_<16 hex>): 64 bits of a hash, unique in practice


def thread_id(end_user_pk: int, kind: str, key: str) -> str:
    digest = hashlib.sha256(f"{end_user_pk}\x00{kind}\x00{key}".encode()).hexdigest()
    return f"th_{digest[:THREAD_ID_HEX]}"


def passage_id(tid: str, seq: int) -> str:
    return f"{tid}/p_{seq:04d}"


def passage_path(source: str, kind: str, tid: str, seq: int) -> str:
    return f"passages/{source}/{PLURAL[kind]}/{tid}/p_{seq:04d}.md"


def parse_passage_id(value: str) -> tuple[str, int] | None:
    match = PASSAGE_ID.match(value.strip())
    return (match.group(1), int(match.group(2))) if match else None


def subject_key(subject: str) -> str:
    """The key a subject's facts are stored and found under: its words, spaced once, case folded."""
    return " ".join(subject.split()).casefold()


def subject_path(name: str) -> str:
    """A subject's file: subjects/<name as a slug>.md."""
    return f"subjects/{slugify(name) or 'subject'}.md"


def iso(value) -> str | None:
    return value.isoformat() if value else None
