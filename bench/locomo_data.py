"""Reads the LoCoMo dev data in place (../shared/bench/locomo-dev), never copying it into the project."""

import json
from pathlib import Path

# ../shared/bench beside the project; a worktree under wt/ finds it one level further up.
DATA = next(
    (
        folder / "shared" / "bench" / "locomo-dev"
        for folder in Path(__file__).resolve().parents
        if (folder / "shared" / "bench" / "locomo-dev").is_dir()
    ),
    Path(__file__).resolve().parent.parent.parent / "shared" / "bench" / "locomo-dev",
)


def items() -> list[dict]:
    """(end_user, item) rows. A few turns carry their photo as base64 in metadata.img_url, over memory_add's
    16 KB metadata bound; the photo's caption is already in the text, so the image is dropped."""
    rows = []
    for line in (DATA / "items.jsonl").open():
        row = json.loads(line)
        row["item"]["metadata"].pop("img_url", None)
        rows.append(row)
    return rows


def queries() -> list[dict]:
    return [json.loads(line) for line in (DATA / "queries.jsonl").open()]


def observations() -> list[dict]:
    return [json.loads(line) for line in (DATA / "observations.jsonl").open()]
