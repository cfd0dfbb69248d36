"""Reads the LoCoMo dev data in place, never copying it into the project: the locomo-dev/ folder of the
directory the environment variable TWIN_BENCH_DATA names (a path relative to the repository root, or
absolute; by default ../shared/bench, where it sits beside the main checkout)."""

import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA_DEFAULT = "../shared/bench"
# An absolute TWIN_BENCH_DATA replaces the root: a checkout elsewhere (a worktree) names the data's place.
DATA = (ROOT / os.environ.get("TWIN_BENCH_DATA", DATA_DEFAULT)).resolve() / "locomo-dev"


def _lines(name: str) -> list[dict]:
    """The rows of one of the data's JSON Lines files; a missing folder says which setting names it."""
    path = DATA / name
    if not path.is_file():
        raise SystemExit(f"LoCoMo data not found at {path}: set TWIN_BENCH_DATA to the folder holding locomo-dev/")
    return [json.loads(line) for line in path.open()]


def items() -> list[dict]:
    """(end_user, item) rows. A few turns carry their photo as base64 in metadata.img_url, over memory_add's
    16 KB metadata bound; the photo's caption is already in the text, so the image is dropped."""
    rows = _lines("items.jsonl")
    for row in rows:
        row["item"]["metadata"].pop("img_url", None)
    return rows


def queries() -> list[dict]:
    return _lines("queries.jsonl")


def observations() -> list[dict]:
    return _lines("observations.jsonl")
