"""Where a word may linger after a write or a forget: every text-like column of every table of the test
database, read as the tables' owner (BYPASSRLS, so row-level security hides no row), and every Redis key and
value of this run (its cache keys and its Celery queue share the run's prefix: tests/conftest.py)."""

import base64
import json
import os
from typing import Any, cast

import redis
from django.conf import settings
from django.db import connections

from memory.selectors import named_rows
from twin.database import OWNER

# information_schema's data_type of every column that can hold words: text, varchar, char, JSON, the full
# text's tsvector, arrays (a passage's item ids).
TEXT_TYPES = ["text", "character varying", "character", "json", "jsonb", "tsvector", "ARRAY"]
_COLUMNS = """
SELECT c.table_name, c.column_name FROM information_schema.columns c
JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' AND c.data_type = ANY(%s)
ORDER BY c.table_name, c.ordinal_position
"""
_HOLDING = (
    "SELECT w AS word FROM unnest(%s::text[]) w "
    "WHERE EXISTS (SELECT 1 FROM {table} WHERE strpos(lower({column}::text), w) > 0)"
)


def text_columns() -> list[dict]:
    """Every text-like column of every table: [{table_name, column_name}]."""
    with connections[OWNER].cursor() as cursor:
        cursor.execute(_COLUMNS, [TEXT_TYPES])
        return named_rows(cursor)


def in_database(words: list[str]) -> dict[str, list[str]]:
    """word (lower case) -> the "table.column"s holding it anywhere in any row."""
    owner = connections[OWNER]
    wanted = [word.lower() for word in words]
    found: dict[str, list[str]] = {}
    with owner.cursor() as cursor:
        for column in text_columns():
            table, name = column["table_name"], column["column_name"]
            cursor.execute(
                _HOLDING.format(table=owner.ops.quote_name(table), column=owner.ops.quote_name(name)), [wanted]
            )
            for row in named_rows(cursor):
                found.setdefault(row["word"], []).append(f"{table}.{name}")
    return found


def redis_client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL)


def redis_texts() -> dict[str, str]:
    """Every Redis key of this run with its value(s) as text; a Celery message's base64 body decoded."""
    client = redis_client()
    texts = {}
    for key in client.scan_iter(match=f"{os.environ['TWIN_CACHE_PREFIX']}*"):
        kind = client.type(key)
        kind = kind.decode() if isinstance(kind, bytes) else kind
        values: list[Any]
        if kind == "string":
            values = [client.get(key)]
        elif kind == "list":
            values = client.lrange(key, 0, -1)
        elif kind == "hash":
            values = [part for pair in client.hgetall(key).items() for part in pair]
        elif kind in ("set", "zset"):
            values = list(client.smembers(key)) if kind == "set" else client.zrange(key, 0, -1)
        else:
            values = []
        # this client decodes nothing, and a sorted set is read without its scores: bytes, every one
        texts[key.decode()] = "\n".join(
            readable(value) for value in cast(list[bytes | None], values) if value is not None
        )
    return texts


def in_redis(words: list[str]) -> dict[str, list[str]]:
    """word (lower case) -> the Redis keys of this run whose name or value holds it."""
    found: dict[str, list[str]] = {}
    for key, text in redis_texts().items():
        for word in words:
            if word.lower() in f"{key}\n{text}".lower():
                found.setdefault(word.lower(), []).append(key)
    return found


def readable(raw: bytes | str) -> str:
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    try:
        message = json.loads(text)
    except ValueError:
        return text
    if isinstance(message, dict) and message.get("properties", {}).get("body_encoding") == "base64":
        text += "\n" + base64.b64decode(message["body"]).decode("utf-8", errors="replace")
    return text
