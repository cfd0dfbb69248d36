"""The secret gate: nothing of a credential pasted into an item is stored (detect.py finds them).

Every write path screens an item here before anything of it is written or looked up: memory_add and import
(both through services._store) and memory_correct; an import's earlier versions and facts too (screen_record).
What then happens is the project's `secret_policy` (accounts.models.SecretPolicy, chosen by Owners and Admins
in the console's project settings):

- refuse (the default): the item is not stored, and its answer names the field and the secret's kind,
  never the secret: {"status": "refused", "field": "items[3].text", "secret": "AWS Access Key"}. The other
  items of the call are stored; an edit is refused and the old version stays.
- redact: the item is stored with each secret replaced by "[redacted: AWS Access Key]", and its answer says
  where ("redacted": [{"field", "secret"}]). An id holding a secret is refused even so (an id is the item's
  identity: redacting it would merge items), and so is a field that redaction would push past its bound.

An id is repeated in an answer only when it holds no secret.
"""

import re
from dataclasses import dataclass, field

from detect_secrets.plugins.private_key import PrivateKeyDetector

from accounts.models import SecretPolicy

from ..errors import InvalidArguments
from ..limits import ITEM_FIELD_MAX, ITEM_TEXT_MAX
from ..routes.answers import REFUSED
from ..selectors import Memory
from .detect import DETECTORS, KEY_IN_PATH, KINDS, PASSWORD_KEY, REDACTED, find_secret, key_in_path, scan_item

IDENTITY = "id"  # the field a secret is never redacted in
BOUNDS = {"text": ITEM_TEXT_MAX}  # the other top-level strings are one-line fields of ITEM_FIELD_MAX
# A detector's match may stop short of its secret (a JWT's signature) or cover only the value after a
# keyword, so each place found is widened to the whole token: up to whitespace, a quote, or what joins a
# key to its value or a URL's parts.
TOKEN_END = re.compile(r"[\s\"'`=:,;()\[\]{}<>@]")
PRIVATE_KEY = PrivateKeyDetector.secret_type
DASHES = "-----"  # what opens "-----BEGIN RSA PRIVATE KEY-----"; the plugin matches from BEGIN
PRIVATE_KEY_END = re.compile(r"-----END[^\n]*")  # a key block runs to its END line (or the text's end)
RULES = {each.rule.secret_type: each.rule for each in DETECTORS}


@dataclass(frozen=True)
class Found:
    """A secret's place (a field path such as "text" or "metadata.api.token") and kind."""

    field: str
    secret: str

    def as_dict(self, prefix: str = "") -> dict:
        return {"field": prefix + self.field, "secret": self.secret}


@dataclass(frozen=True)
class Screened:
    """An item after the gate: what may be stored (as sent, or redacted), or why it may not."""

    item: dict | None  # None: refused
    refused: Found | None = None
    redacted: tuple[Found, ...] = field(default=())

    def refusal(self, prefix: str, sent: dict) -> dict:
        """A refused item's entry in memory_add's answer; `prefix` is its place, such as "items[3].". The id
        is repeated only when it holds no secret."""
        assert self.refused is not None, "asked of a refused item only"
        sent_id = sent.get(IDENTITY)
        shown = sent_id if isinstance(sent_id, str) and find_secret(sent_id) is None else None
        return {"id": shown, "status": REFUSED, **self.refused.as_dict(prefix), "searchable": False}


def redacts(memory: Memory) -> bool:
    """Whether this memory's project stores items holding a secret redacted, rather than refusing them."""
    return memory.end_user.project.secret_policy == SecretPolicy.REDACT


def screen_item(item: dict, *, redact: bool) -> Screened:
    """The item as it may be stored, or its refusal: every string is scanned (memory/secrets.scan_item)."""
    found = scan_item(item)
    if found is None:
        return Screened(item)
    if not redact:
        return Screened(None, Found(*found))
    redactions: list[Found] = []
    cleaned = {}
    for name, value in item.items():
        if name == "metadata":
            cleaned[name] = _redact_json(value, name, None, redactions)
        elif isinstance(value, str) and name != IDENTITY:
            cleaned[name] = _redact_text(value, name, redactions)
            if len(cleaned[name]) > BOUNDS.get(name, ITEM_FIELD_MAX):
                return Screened(None, next(each for each in redactions if each.field == name))
        else:
            cleaned[name] = value
    left = scan_item(cleaned)  # a secret in the id, which is never redacted
    if left is not None:
        return Screened(None, Found(*left))
    return Screened(cleaned, redacted=tuple(dict.fromkeys(redactions)))


def screen_record(record: dict, *, redact: bool) -> dict | None:
    """An earlier version or a fact an import brings, through the same gate: as it may be stored (redacted
    when the project redacts), or None when it holds a secret and may not be (it is then not brought)."""
    if scan_item(record) is None:
        return record
    cleaned = _redact_json(record, "", None, []) if redact else None
    return cleaned if cleaned is not None and scan_item(cleaned) is None else None


def refused_error(found: Found) -> InvalidArguments:
    """The refusal of a single write (memory_correct) that would store a secret: 400 naming the field and
    the secret's kind, never the secret."""
    return InvalidArguments(
        f"{found.field}: holds a secret ({found.secret}); memory never stores one",
        field=found.field,
        secret=found.secret,
    )


def _redact_json(value, path: str, password_key: re.Match | None, redactions: list[Found]):
    """`value` (metadata, at any depth) with its secrets redacted, keys included; scanned as scan_item
    scans it (a key naming a password makes its value one)."""
    if isinstance(value, dict):
        cleaned = {}
        for key, inner in value.items():
            name, inner_path = str(key), f"{path}.{key_in_path(str(key))}"
            kind = find_secret(name)
            if kind:
                redactions.append(Found(f"{path}.{KEY_IN_PATH}", kind))
                name, inner_path = REDACTED.format(kind), f"{path}.{KEY_IN_PATH}"
            cleaned[name] = _redact_json(inner, inner_path, PASSWORD_KEY.search(str(key)), redactions)
        return cleaned
    if isinstance(value, list):
        return [_redact_json(inner, f"{path}[{index}]", password_key, redactions) for index, inner in enumerate(value)]
    if isinstance(value, str) or (isinstance(value, int | float) and not isinstance(value, bool)):
        kind = find_secret(f"{password_key.group()}: {value}" if password_key else str(value))
        if kind is None:
            return value
        if password_key or not isinstance(value, str):  # the whole value is the secret
            redactions.append(Found(path, kind))
            return REDACTED.format(kind)
        return _redact_text(value, path, redactions)
    return value


def _redact_text(text: str, path: str, redactions: list[Found]) -> str:
    """`text` with every secret replaced by its marker, one kind a round; a secret that cannot be placed
    takes the whole text with it."""
    for _ in range(len(KINDS) + 1):  # each round clears one kind for good
        kind = find_secret(text)
        if kind is None:
            return text
        redactions.append(Found(path, kind))
        narrowed = _without(text, kind)
        text = REDACTED.format(kind) if narrowed == text else narrowed
    return text if find_secret(text) is None else REDACTED.format(kind)


def _without(text: str, kind: str) -> str:
    """`text` with each place the detector of `kind` matches (widened to its token) replaced by the marker."""
    rule = RULES[kind]
    if hasattr(rule, "spans"):  # our own rules say where
        found = list(rule.spans(text))
    else:  # a detect-secrets plugin: where its patterns match
        found = [match.span() for pattern in rule.denylist for match in pattern.finditer(text)]
    merged: list[list[int]] = []
    for start, end in sorted(_widened(text, start, end, kind) for start, end in found):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    for start, end in reversed(merged):
        text = text[:start] + REDACTED.format(kind) + text[end:]
    return text


def _widened(text: str, start: int, end: int, kind: str) -> tuple[int, int]:
    if kind == PRIVATE_KEY:
        opened = start >= len(DASHES) and text.startswith(DASHES, start - len(DASHES))
        start = start - len(DASHES) if opened else start
        closing = PRIVATE_KEY_END.search(text, end)
        return start, closing.end() if closing else len(text)
    while start < end and TOKEN_END.match(text, start):  # a pattern's match may open or close on a space
        start += 1
    while end > start and TOKEN_END.match(text, end - 1):
        end -= 1
    while start > 0 and not TOKEN_END.match(text, start - 1):
        start -= 1
    while end < len(text) and not TOKEN_END.match(text, end):
        end += 1
    return start, end
