"""What an item line must meet beyond its schema, checked in the import's first pass so that the second never
meets a value it cannot write, and a fact never claims what cannot have happened:

- a fact's strings fit their columns as they will be stored: its subject once case folded (the key its facts
  are found by: "ﬃ" folds to "ffi", three characters for one), and, in a project that stores secrets
  redacted, every string once the secret gate has redacted it (the marker may be longer than the secret);
- a version's metadata is within an item's bound (ITEM_METADATA_MAX_BYTES);
- a fact is valid from no later than it is valid to, and the moments memory kept (a fact stated, recorded or
  retracted, a version replaced) are no later than now, give or take IMPORT_CLOCK_SKEW.
"""

import json
from datetime import datetime
from typing import cast

from django.db import models

from memory.secrets.gate import screen_record

from ..limits import ITEM_METADATA_MAX_BYTES
from ..models import Fact
from ..paths import subject_key
from .format import ImportLine, InvalidImport


def _characters(name: str) -> int:
    """How many characters the fact column `name` holds."""
    column = Fact._meta.get_field(name)
    assert isinstance(column, models.CharField)
    return cast(int, column.max_length)


# The fact columns the file's strings are stored in, and how many characters each holds.
FACT_COLUMNS = {name: _characters(name) for name in ("subject", "attribute", "value")}
SUBJECT_KEY_MAX = _characters("subject_key")
HAPPENED = ("stated_at", "recorded_at", "retracted_at")  # a fact's moments that cannot lie ahead


def check_fits(line: ImportLine, *, redact: bool, latest: datetime) -> None:
    """InvalidImport naming the line's first version or fact that the store pass could not write as it is, or
    that claims a moment later than `latest` (now and the clock skew); `redact`: the project stores secrets
    redacted, so a fact holding one is stored as the gate redacts it."""
    for i, version in enumerate(line.versions):
        place = f"versions[{i}]"
        if version["replaced_at"] > latest:
            raise InvalidImport(line.number, f"{place}.replaced_at", f"{place}.replaced_at: later than now")
        if "metadata" in version["fields"]:
            size = len(json.dumps(version["fields"]["metadata"], ensure_ascii=False).encode())
            if size > ITEM_METADATA_MAX_BYTES:
                raise InvalidImport(
                    line.number,
                    f"{place}.fields.metadata",
                    f"{place}.fields.metadata: at most {ITEM_METADATA_MAX_BYTES:,} bytes as JSON (got {size:,})",
                    bound=ITEM_METADATA_MAX_BYTES,
                )
    for i, fact in enumerate(line.facts):
        _check_fact(line.number, f"facts[{i}]", fact, redact=redact, latest=latest)


def _check_fact(number: int, place: str, fact: dict, *, redact: bool, latest: datetime) -> None:
    if fact["valid_to"] is not None and fact["valid_to"] < fact["valid_from"]:
        raise InvalidImport(number, f"{place}.valid_to", f"{place}.valid_to: before its valid_from")
    for name in HAPPENED:
        if fact[name] is not None and fact[name] > latest:
            raise InvalidImport(number, f"{place}.{name}", f"{place}.{name}: later than now")
    _check_columns(number, place, fact, "")
    if redact:
        screened = screen_record(fact, redact=True)
        if screened is not None and screened is not fact:
            _check_columns(number, place, screened, " once its secret is redacted")


def _check_columns(number: int, place: str, fact: dict, how: str) -> None:
    for name, most in FACT_COLUMNS.items():
        if len(fact[name]) > most:
            raise InvalidImport(
                number, f"{place}.{name}", f"{place}.{name}: longer than {most} characters{how}", bound=most
            )
    if len(subject_key(fact["subject"])) > SUBJECT_KEY_MAX:
        raise InvalidImport(
            number,
            f"{place}.subject",
            f"{place}.subject: longer than {SUBJECT_KEY_MAX} characters once case folded{how}",
            bound=SUBJECT_KEY_MAX,
        )
