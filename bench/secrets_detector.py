"""Measures the secret detector (memory/secrets/): recall per kind, near misses refused, LoCoMo turns refused,
and scanning speed against a baseline measured in the same run.

    .venv/bin/python bench/secrets_detector.py            # the tables of bench/README.md, section "Secrets"
    .venv/bin/python bench/secrets_detector.py --errors   # also every miss and every false refusal
    .venv/bin/python bench/secrets_detector.py --data DIR # the LoCoMo dev folder, if not TWIN_BENCH_DATA's

(1) bench/secrets_cases.jsonl (written by bench/secrets_cases.py): recall per kind, a positive counting only
    when the detector names its kind; and how many near misses it refuses. A line holding an item (a key
    split between two fields, a card sent as a float) is read whole, through `scan_item`.
(2) LoCoMo dev, read in place: every turn goes through `scan_item` as memory_add would see it (the base64
    photos dropped, as bench/locomo_data.py does); each turn refused is a false refusal.
(3) Speed, ms per 100,000 characters (the largest item text): the LoCoMo turns joined and cut into pieces of
    at most 100,000 characters; the turns one by one, as messages arrive; a synthetic 100,000-character text
    of technical notes full of the words the detectors' gates look for (key, token, password, pin, cloud,
    secret, numbers) but holding no secret, as lines and as one single line (the worst case: the gates
    cannot narrow it to lines). Each is the best of several runs; the baselines, `str.lower()` and a plain
    regex (`\\w+` findall) over the same text in the same run, let machines be compared.
(4) The gates never change an answer: `find_secret` agrees on every text with running every detector on
    the whole of what it reads (the text normalised, then each base64 run in it that decodes to text).

Not named bench/secrets.py: a script's folder leads sys.path, so that name would shadow the standard library's
`secrets` module for Django in every script of this folder.
"""

import argparse
import json
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import locomo_data  # noqa: E402 - after the project root is on the path
from memory.secrets.detect import DETECTORS, KINDS, find_secret, readings, scan_item  # noqa: E402 - after the project root is on the path

CASES = Path(__file__).resolve().parent / "secrets_cases.jsonl"
PIECE = 100_000  # characters: memory_add's largest text, and the unit of the speed target
RUNS = 7  # the best of several runs, since these machines are shared and noisy
SYNTHETIC_SEED = 7
WORD = re.compile(r"\w+")


def unfiltered(text: str) -> str | None:
    """The answer without gates or line narrowing: every detector on the whole of each reading, in order."""
    for reading in readings(text):
        for each in DETECTORS:
            if next(iter(each.rule.analyze_string(reading)), None) is not None:
                return each.rule.secret_type
    return None


def answer(row: dict) -> str | None:
    """The kind the gate names for a case: a text's, or an item's read whole as memory_add reads it."""
    if "text" in row:
        return find_secret(row["text"])
    found = scan_item(row["item"])
    return found[1] if found else None


def best_ms(scan, texts: list[str]) -> float:
    best = float("inf")
    for _ in range(RUNS):
        started = time.perf_counter()
        for text in texts:
            scan(text)
        best = min(best, time.perf_counter() - started)
    return best * 1000


def pieces(text: str) -> list[str]:
    """`text` cut at line ends into pieces of at most PIECE characters."""
    out: list[str] = []
    current: list[str] = []
    size = 0
    for line in text.split("\n"):
        if size + len(line) + 1 > PIECE and current:
            out.append("\n".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line) + 1
    out.append("\n".join(current))
    return out


def synthetic() -> str:
    """100,000 characters of notes a developer might keep, with no secret in them."""
    rng = random.Random(SYNTHETIC_SEED)

    def hexes(n: int) -> str:
        return "".join(rng.choice("0123456789abcdef") for _ in range(n))

    lines = (
        lambda: f"Deployed the billing service to eu-west-{rng.randint(1, 3)}; the key change is the retry budget.",
        lambda: f"Token usage went up {rng.randint(2, 90)}% after the prompt change, see the dashboard.",
        lambda: f"Reminder: rotate the API key for search before {rng.randint(1, 28)} March, ask Ana for access.",
        lambda: f"The password manager sync failed at {rng.randint(0, 23)}:{rng.randint(10, 59)}, retried fine.",
        lambda: f"Order {rng.randint(10**9, 10**10)} shipped; tracking {hexes(8)}-{hexes(4)}-{hexes(4)}-{hexes(12)}",
        lambda: f"Commit {hexes(40)} fixes the pin mapping on the board (pin {rng.randint(1, 40)}).",
        lambda: f"https://docs.example.com/guides/{rng.randint(1, 999)}?ref=notes&lang=en",
        lambda: f"Caroline: I went to the pottery class yesterday and it was so {rng.choice(('calm', 'fun'))}!",
        lambda: f'{{"user": "ana", "status": "ok", "count": {rng.randint(1, 10**6)}, "passed": true}}',
        lambda: f"cloud spend: ${rng.randint(100, 9999)}.{rng.randint(10, 99)} this month, mostly storage",
        lambda: "Next: the secret rotation policy draft, then the keynote slides and the token budget.",
        lambda: f"sha256:{hexes(64)}",
        lambda: (
            f"Phone +44 20 {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}, "
            f"ISBN 978-{rng.randint(10**9, 10**10 - 1)}"
        ),
        lambda: f"config: region=eu-west-1 timeout={rng.randint(1, 60)}s retries={rng.randint(1, 9)} pass-through=on",
        lambda: "My PIN pad broke, so I paid cash; the passcode screen on the kiosk kept flashing.",
    )
    text, out = 0, []
    while text < PIECE:
        line = rng.choice(lines)()
        out.append(line)
        text += len(line) + 1
    return "\n".join(out)[:PIECE]


def recall(rows: list[dict], errors: bool) -> None:
    found: Counter[str] = Counter()
    total: Counter[str] = Counter()
    near_refused: list[tuple[str, str]] = []
    for row in rows:
        kind = answer(row)
        shown = row.get("text", row.get("item"))
        if row["kind"] is None:
            if kind:
                near_refused.append((kind, repr(shown)))
            continue
        total[row["kind"]] += 1
        found[row["kind"]] += kind == row["kind"]
        if errors and kind != row["kind"]:
            print(f"  missed {row['kind']}: got {kind}: {repr(shown)[:160]}")
    print("| kind | cases | recall |\n|---|---|---|")
    for kind in KINDS:
        print(f"| {kind} | {total[kind]} | {found[kind] / total[kind]:.2f} |" if total[kind] else f"| {kind} | 0 | - |")
    near = sum(1 for row in rows if row["kind"] is None)
    print(
        f"\nlowest recall {min(found[k] / total[k] for k in total):.2f}; near misses refused: "
        f"{len(near_refused)} of {near}"
    )
    for kind, text in near_refused if errors else ():
        print(f"  refused as {kind}: {text[:160]}")


def locomo(errors: bool) -> list[str]:
    rows = locomo_data.items()
    scanned = [(row["item"]["id"], scan_item(row["item"])) for row in rows]
    refused = [(item_id, found) for item_id, found in scanned if found]
    print(
        f"\nLoCoMo dev turns refused: {len(refused)} of {len(rows)} ({len(refused) / len(rows):.2%}); by kind: "
        f"{dict(Counter(kind for _, (_, kind) in refused)) or 'none'}"
    )
    for item_id, (field, kind) in refused if errors else ():
        print(f"  {item_id} {field}: {kind}")
    return [row["item"]["text"] for row in rows]


def speed(turns: list[str]) -> list[str]:
    joined = "\n".join(turns)
    notes = synthetic()
    texts = {
        f"LoCoMo turns joined ({len(joined):,} chars in pieces of 100,000)": pieces(joined),
        f"LoCoMo turns one by one ({len(turns):,} texts)": turns,
        "synthetic notes, 100,000 chars, lines": [notes],
        "synthetic notes, 100,000 chars, one line": [notes.replace("\n", " ")],
    }
    print("\n| text | find_secret ms/100k | without gates | str.lower() | \\w+ findall | ÷ lower | ÷ regex |")
    print("|---|---|---|---|---|---|---|")
    for name, group in texts.items():
        per = PIECE / sum(len(text) for text in group)
        scan, whole, lower, words = (
            best_ms(f, group) * per for f in (find_secret, unfiltered, str.lower, WORD.findall)
        )
        print(
            f"| {name} | {scan:.1f} | {whole:.1f} | {lower:.2f} | {words:.1f} | {scan / lower:.0f} | "
            f"{scan / words:.1f} |"
        )
    return [notes, notes.replace("\n", " ")] + pieces(joined)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--errors", action="store_true", help="list every miss and every false refusal")
    parser.add_argument("--data", type=Path, help="the LoCoMo dev folder (default: bench/locomo_data.py's)")
    args = parser.parse_args()
    if args.data:
        locomo_data.DATA = args.data.resolve()
    rows = [json.loads(line) for line in CASES.open()]
    recall(rows, args.errors)
    turns = locomo(args.errors)
    long_texts = speed(turns)
    checked = [row["text"] for row in rows if "text" in row] + turns + long_texts
    disagree = sum(find_secret(text) != unfiltered(text) for text in checked)
    print(f"\nGates and line narrowing changed {disagree} answers of {len(checked):,} texts.")


if __name__ == "__main__":
    main()
