"""Writes team.jsonl: six weeks of one small payments team's Slack, GitHub and PagerDuty activity.

Each line is exactly one memory_add item (text, kind, id, at, author, session, metadata) following the
connector conventions (metadata.source, surface, action, outcome, thread). Deterministic: a fixed seed, so
the committed file is this script's output and the tests can name what it holds:

- Tom Becker's run-up before every deploy: test -> review_request -> merge -> deploy, then a note in
  #deploys; the sample ends with him having just merged (so his next step is a deploy).
- INC-101 (Friday 21 March, 16:40 deploy of acme/web) and its postmortem: "we now deploy before 3pm".
- INC-102 (a migration that locked the transactions table), INC-103 (an expired webhook certificate).
- Attempts with outcomes: FX-rate caching (success), a two-SDK upgrade (failure), a flagged rollout (success).

    .venv/bin/python -m memory.sample.generate   # rewrites memory/sample/team.jsonl
"""

import json
from datetime import timedelta
from pathlib import Path

from memory.sample.stories import stories
from memory.sample.team import API, LEO, MAYA, PRIYA, SARA, START, TOM, TOM_TITLES, WEB, Sample, at

OUT = Path(__file__).with_name("team.jsonl")


def build() -> list[dict]:
    s = Sample()
    days = [START + timedelta(days=i) for i in range(42) if (START + timedelta(days=i)).weekday() < 5]
    tom_titles = iter(TOM_TITLES)
    for n, day in enumerate(days):
        week, weekday = n // 5, day.weekday()
        for author in s.rng.sample([TOM, MAYA, PRIYA, LEO], 4):
            s.chat(at(day, 9, s.rng.randint(0, 50)), author, "#payments")
        if s.rng.random() < 0.5:
            s.chat(at(day, 16, s.rng.randint(0, 50)), s.rng.choice([MAYA, PRIYA, LEO]), "#payments")
        if weekday == 0:
            s.chat(at(day, 9, 55), SARA, "#payments")
        if s.rng.random() < 0.4:
            s.chat(
                at(day, 12, s.rng.randint(30, 59)),
                s.rng.choice([TOM, LEO, PRIYA]),
                "#random",
                s.rng.choice(
                    [
                        "anyone up for lunch at the ramen place?",
                        "the coffee machine is fixed!",
                        "who left the standing desk at max height",
                    ]
                ),
            )
        # Tom: the same run-up before every deploy, twice a week.
        if weekday in (1, 3):
            title = next(tom_titles)
            s.pull(at(day, 10), TOM, API, MAYA, title)
            s.chat(at(day, 11, 55), TOM, "#deploys", f"payments-api is out with {title}, watching the dashboards")
        # Leo: web changes with a looser routine.
        if weekday in (0, 2) and not (week == 3 and weekday == 2):
            s.pull(
                at(day, 11, 15),
                LEO,
                WEB,
                s.rng.choice([PRIYA, TOM]),
                s.rng.choice(["receipts page polish", "checkout copy", "card form validation", "date picker fix"]),
                test=s.rng.random() < 0.6,
            )
        if weekday == 1 and week % 2 == 0:
            s.add(
                at(day, 15, 10),
                PRIYA,
                "github",
                API,
                "review",
                f"{PRIYA} reviewed {API}#{s.pr}: please add a metric for retry counts.",
                f"{API}#{s.pr}",
            )
    stories(s)
    s.items.sort(key=lambda item: item["at"])
    for i, item in enumerate(s.items, 1):
        item["id"] = f"team-{i:04d}"
    return s.items


def main() -> None:
    items = build()
    OUT.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items))
    print(f"wrote {len(items)} events to {OUT}")


if __name__ == "__main__":
    main()
