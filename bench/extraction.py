"""Measure the rule-based fact extractor (memory/extraction/extractor.py).

    .venv/bin/python bench/extraction.py            # tables ready for bench/README.md
    .venv/bin/python bench/extraction.py --errors   # also list every miss and every wrong fact

(1) The hand-labelled set, bench/extraction_cases.jsonl: statements written for this benchmark, each with
    the facts a careful reader would store. A prediction matches a gold fact when subject (case-insensitive),
    attribute and the ended flag agree and the values agree after normalising (lower case, no articles or
    punctuation), one containing the other. Precision, recall and F1 per attribute; how many statements
    that must yield nothing did yield something; and, for matched facts whose gold gives a date, how
    often the extracted date is exactly right.

(2) LoCoMo dev (read in place from bench/locomo_data.py's folder, under TWIN_BENCH_DATA; never copied). There
    are no gold triples, only observations about each speaker written by a model, each citing the turns it
    rests on. Two proxies:
    - support (a precision proxy): a fact extracted from turn T is supported when an observation citing T,
      about the fact's subject (its speaker, or naming the subject), mentions every content word of the
      value (crude stemming). Observations summarise, so true facts they leave out count as unsupported:
      this is a lower bound on precision, and the unsupported list (--errors) is worth reading by hand.
    - coverage (a recall proxy): observations are sorted into attribute families by keywords ("lives in",
      "works at", "a dog named", "loves", "is planning" ...); an observation is covered when a fact of that
      family about its speaker was extracted from one of its evidence turns. Many observations paraphrase
      turns that never state the fact plainly ("Painting's great for expressing myself" -> "Melanie enjoys
      painting"), so this is also a lower bound, and a harsh one.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.locomo_data import DATA as LOCOMO  # noqa: E402 - after the project root is on the path
from memory.extraction.attributes import ATTRIBUTES  # noqa: E402 - after the project root is on the path
from memory.extraction.extractor import extract  # noqa: E402 - after the project root is on the path
from memory.extraction.vocabulary import JOB_HEADS, PETS  # noqa: E402 - after the project root is on the path

CASES = ROOT / "bench" / "extraction_cases.jsonl"
COMMAND = ".venv/bin/python bench/extraction.py"


def norm(value: str) -> str:
    value = re.sub(r"[^\w@+.\- ]", " ", value.lower())
    value = re.sub(r"\b(?:the|a|an)\b", " ", value)
    return re.sub(r"\s+", " ", value).strip(" .")


def value_match(gold: str, got: str) -> bool:
    g, p = norm(gold), norm(got)
    if not g or not p:
        return g == p
    return g == p or g in p or p in g


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def bench_cases(show_errors: bool) -> None:
    rows = [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    by_split: dict[str, Counter] = defaultdict(Counter)  # split -> tp/fp/fn
    dates_right = dates_total = negatives_hit = negatives = sentences = 0
    errors: list[str] = []
    elapsed = 0.0
    for row in rows:
        at = datetime.fromisoformat(row["at"])
        started = time.perf_counter()
        got = extract(row["text"], author=row.get("author"), at=at, end_user=row.get("end_user"))
        elapsed += time.perf_counter() - started
        sentences += 1
        if not row["facts"]:
            negatives += 1
            negatives_hit += bool(got)
        unmatched = list(got)
        split = by_split[row.get("split", "dev")]
        for gold in row["facts"]:
            found = next(
                (
                    f
                    for f in unmatched
                    if f.subject.lower() == gold["subject"].lower()
                    and f.attribute == gold["attribute"]
                    and f.ended == bool(gold.get("ended"))
                    and value_match(gold["value"], f.value)
                ),
                None,
            )
            if found is None:
                fn[gold["attribute"]] += 1
                split["fn"] += 1
                errors.append(f"MISS  {row['text']!r}: {gold}")
                continue
            unmatched.remove(found)
            tp[gold["attribute"]] += 1
            split["tp"] += 1
            for key in ("valid_from", "valid_to"):
                if key in gold:
                    dates_total += 1
                    ok = str(getattr(found, key)) == gold[key]
                    dates_right += ok
                    if not ok:
                        errors.append(f"DATE  {row['text']!r}: {key} {getattr(found, key)} != {gold[key]}")
        for f in unmatched:
            fp[f.attribute] += 1
            split["fp"] += 1
            errors.append(
                f"WRONG {row['text']!r}: {f.subject} {f.attribute}={f.value!r}{' (ended)' if f.ended else ''}"
            )

    print(
        f"### Hand-labelled set ({len(rows)} statements, {sum(len(r['facts']) for r in rows)} gold facts,"
        f" {negatives} that must yield nothing)\n"
    )
    print("| attribute | gold | extracted | precision | recall | F1 |")
    print("|---|---:|---:|---:|---:|---:|")
    for attr in [a for a in ATTRIBUTES if tp[a] + fp[a] + fn[a]]:
        p, r, f1 = prf(tp[attr], fp[attr], fn[attr])
        print(f"| {attr} | {tp[attr] + fn[attr]} | {tp[attr] + fp[attr]} | {p:.2f} | {r:.2f} | {f1:.2f} |")
    T, F, N = sum(tp.values()), sum(fp.values()), sum(fn.values())
    p, r, f1 = prf(T, F, N)
    print(f"| **all** | {T + N} | {T + F} | **{p:.2f}** | **{r:.2f}** | **{f1:.2f}** |\n")
    for name, c in sorted(by_split.items()):
        p, r, f1 = prf(c["tp"], c["fp"], c["fn"])
        label = "written before and tuned against" if name == "dev" else "written after the rules were frozen"
        print(f"- {name} ({label}): precision {p:.2f}, recall {r:.2f}, F1 {f1:.2f}")
    print()
    print(
        f"Statements that must yield nothing but yielded a fact: {negatives_hit} of {negatives}. "
        f"Dates exactly right on matched facts with a gold date: {dates_right} of {dates_total}. "
        f"Speed: {1000 * elapsed / sentences:.3f} ms per statement.\n"
    )
    if show_errors:
        print("\n".join(errors) + "\n")


# Observation keywords -> the attribute family they are about (for the coverage proxy).
_PET = "|".join(sorted(PETS, key=len, reverse=True))
FAMILIES = {
    "home_city": r"\b(?:lives? in|moved to|moving to|relocat\w+ to)\b",
    "hometown": r"\b(?:is from|grew up in|originally from|home country)\b",
    "employer": r"\b(?:works? (?:at|for)|job at|employed|hired|lost (?:his|her|their) job|quit (?:his|her) job)\b",
    "job_title": r"\b(?:works? as|promoted|is an? (?:\w+ ){0,2}(?:" + "|".join(JOB_HEADS) + r"))\b",
    "school": r"\b(?:studies|studying|university|college|graduat\w+)\b",
    "pet": r"\b(?:has|have|adopted|got) (?:a |an |two |three )?(?:\w+ )?(?:"
    + _PET
    + r")s?\b|\b(?:"
    + _PET
    + r")s? named\b",
    "spouse": r"\b(?:husband|wife|married)\b",
    "partner": r"\b(?:boyfriend|girlfriend|partner|engaged)\b",
    "child": r"\b(?:kids|children|son|daughter)\b",
    "sibling": r"\b(?:brother|sister|siblings?)\b",
    "parent": r"\b(?:mom|mother|dad|father|parents)\b",
    "likes": r"\b(?:loves?|enjoys?|likes?|fan of|favou?rite|passionate about|is into)\b",
    "dislikes": r"\b(?:hates?|dislikes?|does(?:n't| not) like|can't stand|afraid of|scared of)\b",
    "hobby": r"\b(?:hobby|hobbies|plays (?:the )?\w+|free time|spare time)\b",
    "plan": r"\b(?:plans? to|planning|is going to|will|next (?:week|month|year)|upcoming)\b",
    "age": r"\b(?:years old|turned \d+|turning \d+)\b",
    "birthday": r"\bbirthday\b",
}
_STOPWORDS = set("the a an and or of to in on at for with my his her their is are was i".split())


def _stems(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {re.sub(r"(?:ing|ed|es|s|e)$", "", w)[:6] for w in words if w not in _STOPWORDS}


def bench_locomo(show_errors: bool) -> None:
    items = [json.loads(line) for line in (LOCOMO / "items.jsonl").read_text().splitlines() if line.strip()]
    observations = [
        json.loads(line) for line in (LOCOMO / "observations.jsonl").read_text().splitlines() if line.strip()
    ]
    by_turn: dict[str, list[dict]] = defaultdict(list)
    for obs in observations:
        for turn in obs["evidence_ids"]:
            by_turn[turn].append(obs)
    facts_by_turn: dict[str, list] = {}
    started = time.perf_counter()
    for row in items:
        item = row["item"]
        facts_by_turn[item["id"]] = extract(
            item["text"], author=item.get("author"), at=datetime.fromisoformat(item["at"]), end_user=row["end_user"]
        )
    elapsed = time.perf_counter() - started

    supported: Counter[str] = Counter()
    extracted: Counter[str] = Counter()
    unsupported: list[str] = []
    text_of = {row["item"]["id"]: row["item"]["text"] for row in items}
    for turn, facts in facts_by_turn.items():
        for f in facts:
            extracted[f.attribute] += 1
            value = _stems(f.value.split(" (")[0]) or {f.value.lower()}
            ok = any(
                (o["speaker"].lower() == f.subject.lower() or f.subject.lower() in o["observation"].lower())
                and value <= _stems(o["observation"])
                for o in by_turn.get(turn, [])
            )
            supported[f.attribute] += ok
            if not ok:
                unsupported.append(f"{f.subject} {f.attribute}={f.value!r} <- {text_of[turn][:140]!r}")

    covered: Counter[str] = Counter()
    classified: Counter[str] = Counter()
    for obs in observations:
        for attr, rx in FAMILIES.items():
            if re.search(rx, obs["observation"], re.I):
                classified[attr] += 1
                covered[attr] += any(
                    f.attribute == attr and f.subject.lower() == obs["speaker"].lower()
                    for turn in obs["evidence_ids"]
                    for f in facts_by_turn.get(turn, [])
                )

    n_facts = sum(extracted.values())
    print(
        f"### LoCoMo dev proxy ({len(items)} turns, {len(observations)} observations, {n_facts} facts "
        f"extracted, {1000 * elapsed / len(items):.3f} ms per turn)\n"
    )
    print(
        "| attribute | facts extracted | supported by an observation (precision proxy) | observations of "
        "the family | covered (recall proxy) |"
    )
    print("|---|---:|---:|---:|---:|")
    for attr in [a for a in ATTRIBUTES if extracted[a] or classified[a]]:
        sup = f"{supported[attr]} ({supported[attr] / extracted[attr]:.2f})" if extracted[attr] else "-"
        cov = f"{covered[attr]} ({covered[attr] / classified[attr]:.2f})" if classified[attr] else "-"
        print(f"| {attr} | {extracted[attr]} | {sup} | {classified[attr]} | {cov} |")
    S, C, K = sum(supported.values()), sum(covered.values()), sum(classified.values())
    print(f"| **all** | {n_facts} | **{S} ({S / max(n_facts, 1):.2f})** | {K} | **{C} ({C / max(K, 1):.2f})** |\n")
    if show_errors:
        print("Unsupported facts (read them: an unsupported fact may still be true):")
        print("\n".join(unsupported) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--errors", action="store_true", help="list misses, wrong facts, unsupported facts")
    args = parser.parse_args()
    bench_cases(args.errors)
    if (LOCOMO / "items.jsonl").exists():
        bench_locomo(args.errors)
    else:
        print(f"(LoCoMo dev data not found at {LOCOMO}; skipped)\n")
    print(f"Reproduce: `{COMMAND}`")


if __name__ == "__main__":
    main()
