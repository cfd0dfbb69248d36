"""Writes team.jsonl: six weeks of one small payments team's Slack, GitHub and PagerDuty activity.

Each line is exactly one memory_add item (text, kind, id, at, author, session, metadata) following the
connector conventions (metadata.source, surface, action, outcome, thread). Deterministic: a fixed seed, so
the committed file is this script's output and the tests can name what it holds:

- Tom Becker's run-up before every deploy: test -> review_request -> merge -> deploy, then a note in
  #deploys; the sample ends with him having just merged (so his next step is a deploy).
- INC-101 (Friday 21 March, 16:40 deploy of acme/web) and its postmortem: "we now deploy before 3pm".
- INC-102 (a migration that locked the transactions table), INC-103 (an expired webhook certificate).
- Attempts with outcomes: FX-rate caching (success), a two-SDK upgrade (failure), a flagged rollout (success).

    .venv/bin/python memory/sample/generate.py   # rewrites memory/sample/team.jsonl
"""

import json
import random
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

OUT = Path(__file__).with_name("team.jsonl")
START = date(2025, 3, 3)  # a Monday; six working weeks to Friday 11 April
API, WEB = "acme/payments-api", "acme/web"
TOM, MAYA, PRIYA, LEO, SARA = "Tom Becker", "Maya Patel", "Priya Shah", "Leo Martins", "Sara Kim"

# Each person's voice on Slack: greetings, bodies and sign-offs the how-they-work voice should pick up.
VOICE = {
    TOM: (
        ["hey folks,", "hey", "yo"],
        [
            "lgtm, shipping it after lunch",
            "quick one: anyone else seeing flaky retries on the refunds test?",
            "pushed a fix for the idempotency key bug, ptal",
            "fwiw the ledger export is way faster now",
            "gonna pair with Maya on the payouts refactor",
            "refund webhooks look fine on staging",
            "tiny PR incoming for the currency rounding thing",
            "coffee first, then the settlement job",
        ],
        ["cheers", "🚀", ""],
    ),
    MAYA: (
        ["Morning all,", "Hi all,"],
        [
            "please keep PRs under 400 lines so reviews stay quick.",
            "the payouts refactor is next on my list after the reviews.",
            "I will be reviewing payments-api PRs this afternoon.",
            "reminder that the deploy checklist is pinned.",
            "the settlement job needs an owner this sprint.",
            "good progress on the ledger work this week.",
        ],
        ["Thanks, Maya", "— Maya"],
    ),
    PRIYA: (
        ["Hi,", "Heads up:"],
        [
            "error budget for payments-api is at 82% for the month.",
            "I rotated the staging database credentials.",
            "on-call handover is at 10:00 as usual.",
            "the p95 latency alert on /charge fired once overnight, it self-resolved.",
            "Grafana dashboards for refunds are updated.",
        ],
        ["Thanks", ""],
    ),
    LEO: (
        ["hey!", "hi"],
        [
            "new checkout styles are on staging, feedback welcome",
            "the Safari date picker is still odd",
            "working on the receipts page today",
            "anyone know why the web build takes 9 minutes now?",
            "pushed the copy changes Sara asked for",
        ],
        ["thx", ""],
    ),
    SARA: (
        ["Hi team,", "Good morning team,"],
        [
            "the priority this week is the new checkout flow. Please flag any blockers in this channel.",
            "customer support reports fewer failed card payments since the retry change. Great work.",
            "I have moved the payouts dashboard to next sprint so we can focus on reliability.",
            "the quarterly review is on Thursday; I will share the slides beforehand.",
        ],
        ["Thanks, Sara", "Best, Sara"],
    ),
}


class Sample:
    def __init__(self):
        self.rng = random.Random(20250303)
        self.items: list[dict] = []
        self.pr = 100
        self.version = {API: 40, WEB: 12}

    def add(
        self,
        at: datetime,
        author: str,
        source: str,
        surface: str,
        action: str,
        text: str,
        thread: str,
        outcome: str | None = None,
    ) -> None:
        metadata = {"source": source, "surface": surface, "action": action, "thread": thread}
        if outcome:
            metadata["outcome"] = outcome
        self.items.append(
            {
                "text": text,
                "kind": "message",
                "id": "",
                "at": at.isoformat(),
                "author": author,
                "session": thread,
                "metadata": metadata,
            }
        )

    def chat(self, at: datetime, author: str, channel: str, body: str | None = None) -> None:
        greetings, bodies, signoffs = VOICE[author]
        body = body or self.rng.choice(bodies)
        sign = self.rng.choice(signoffs)
        text = f"{self.rng.choice(greetings)} {body}" + (f" {sign}" if sign else "")
        self.add(at, author, "slack", channel, "message", text, f"slack:{channel}:{at.date()}")

    def pull(
        self,
        at,
        author,
        repo,
        reviewer,
        title,
        *,
        test=True,
        review=True,
        deploy=True,
        outcome="success",
        minutes=(0, 20, 60, 90, 105),
    ) -> str:
        """One pull request from tests to deploy; returns its thread."""
        self.pr += 1
        thread = f"{repo}#{self.pr}"
        t = [at + timedelta(minutes=m + self.rng.randint(0, 4)) for m in minutes]
        if test:
            self.add(
                t[0],
                author,
                "github",
                repo,
                "test",
                f"CI passed on {thread} ({title}): {self.rng.randint(380, 460)} tests, 0 failures.",
                thread,
                "success",
            )
        if review:
            self.add(
                t[1],
                author,
                "github",
                repo,
                "review_request",
                f"{author} asked {reviewer} to review {thread}: {title}.",
                thread,
            )
            verdict = self.rng.choice(["looks good", "nice and small", "one nit on naming, fine to merge"])
            self.add(t[2], reviewer, "github", repo, "approve", f"{reviewer} approved {thread}: {verdict}.", thread)
        self.add(t[3], author, "github", repo, "merge", f"{author} merged {thread} into main: {title}.", thread)
        if deploy:
            self.version[repo] += 1
            self.add(
                t[4],
                author,
                "github",
                repo,
                "deploy",
                f"{author} deployed {repo} v{self.version[repo] // 10}.{self.version[repo] % 10} to "
                f"production ({title}).",
                f"deploy:{repo}:{self.version[repo]}",
                outcome,
            )
        return thread


def at(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=UTC)


TOM_TITLES = [
    "retry failed webhooks with backoff",
    "cache FX rates on /quote",
    "idempotency keys on refunds",
    "faster ledger export",
    "currency rounding fix",
    "settlement job batching",
    "payouts refactor part 1",
    "payouts refactor part 2",
    "refund reason codes",
    "charge audit log",
    "webhook signature logging",
    "statement descriptors",
    "dispute evidence upload",
]


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
    _stories(s)
    s.items.sort(key=lambda item: item["at"])
    for i, item in enumerate(s.items, 1):
        item["id"] = f"team-{i:04d}"
    return s.items


def _stories(s: Sample) -> None:
    """The incidents, postmortems and attempts the tests check by hand, in the order they are written."""
    _attempts(s)
    _friday_deploy(s)
    _locked_table(s)
    _expired_certificate(s)
    _the_end(s)


def _inc(number: int) -> str:
    """An incident's thread: INC-101."""
    return f"INC-{number}"


def _attempts(s: Sample) -> None:
    """Attempts with outcomes: FX-rate caching (success), a two-SDK upgrade (failure), a flagged rollout."""
    s.add(
        at(date(2025, 3, 13), 14, 5),
        TOM,
        "slack",
        "#payments",
        "message",
        "Tried caching FX rates in Redis with a 60s TTL on /quote: worked, p95 went from 820ms to 140ms. Keeping it.",
        "slack:#payments:fx-cache",
        "success",
    )
    s.add(
        at(date(2025, 3, 18), 16, 20),
        LEO,
        "slack",
        "#payments",
        "message",
        "Tried upgrading stripe-js and stripe-python in one PR: failed, webhook signature checks broke on "
        "staging and I reverted. Next time upgrade one SDK at a time.",
        "slack:#payments:sdk-upgrade",
        "failure",
    )
    s.add(
        at(date(2025, 4, 1), 10, 40),
        SARA,
        "slack",
        "#payments",
        "message",
        "Hi team, we tried rolling out the new checkout behind a feature flag to 10% of users first: it worked, "
        "no error spike, so we go to 50% tomorrow. Thanks, Sara",
        "slack:#payments:checkout-flag",
        "success",
    )


def _friday_deploy(s: Sample) -> None:
    """INC-101: a Friday-afternoon deploy, its rollback and postmortem ("we now deploy before 3pm")."""
    fri = date(2025, 3, 21)
    s.pull(
        at(fri, 16, 20),
        LEO,
        WEB,
        TOM,
        "new checkout bundle",
        test=False,
        review=False,
        outcome="failure",
        minutes=(0, 0, 0, 10, 20),
    )
    s.add(
        at(fri, 16, 58),
        PRIYA,
        "pagerduty",
        "payments-prod",
        "incident_open",
        "INC-101 opened: checkout error rate at 12% on acme/web right after the 16:40 deploy. Priya Shah on call.",
        _inc(101),
    )
    s.add(
        at(fri, 17, 5),
        PRIYA,
        "slack",
        "#incidents",
        "message",
        "Heads up: checkout is failing on Safari since the last web deploy, looking at it now.",
        _inc(101),
    )
    s.add(
        at(fri, 17, 22),
        LEO,
        "github",
        WEB,
        "rollback",
        "Leo Martins rolled back acme/web to the previous release after INC-101.",
        _inc(101),
        "success",
    )
    s.add(
        at(fri, 17, 38),
        PRIYA,
        "pagerduty",
        "payments-prod",
        "incident_resolve",
        "INC-101 resolved: checkout error rate back under 0.5% after the rollback.",
        _inc(101),
        "success",
    )
    s.add(
        at(date(2025, 3, 24), 10, 30),
        PRIYA,
        "slack",
        "#incidents",
        "postmortem",
        "Postmortem INC-101 (checkout errors, Friday 21 March). Root cause: a Friday-afternoon deploy of "
        "acme/web at 16:40 shipped a bundle that broke Safari while half the team was offline, so the rollback "
        "took 40 minutes. What worked: the one-click rollback. Lesson: deploying on Friday afternoon caused "
        "the incident; we now deploy before 3pm and never on Friday afternoons.",
        _inc(101),
        "failure",
    )
    s.add(
        at(date(2025, 3, 24), 10, 45),
        MAYA,
        "slack",
        "#incidents",
        "message",
        "Morning all, agreed on the 3pm rule. I added it to the deploy checklist. Thanks, Maya",
        _inc(101),
    )


def _locked_table(s: Sample) -> None:
    """INC-102: a migration that locked the transactions table."""
    wed = date(2025, 3, 26)
    s.pull(
        at(wed, 13, 20),
        MAYA,
        API,
        PRIYA,
        "index on transactions.merchant_id",
        test=True,
        outcome="failure",
        minutes=(0, 5, 25, 40, 50),
    )
    s.add(
        at(wed, 14, 16),
        PRIYA,
        "pagerduty",
        "payments-prod",
        "incident_open",
        "INC-102 opened: payments-api timeouts, the transactions table is locked by a running migration.",
        _inc(102),
    )
    s.add(
        at(wed, 14, 41),
        PRIYA,
        "pagerduty",
        "payments-prod",
        "incident_resolve",
        "INC-102 resolved: migration cancelled, the table lock released, timeouts gone.",
        _inc(102),
        "success",
    )
    s.add(
        at(date(2025, 3, 27), 11, 0),
        PRIYA,
        "slack",
        "#incidents",
        "postmortem",
        "Postmortem INC-102 (payments-api timeouts, 26 March). Root cause: the migration ran CREATE INDEX "
        "without CONCURRENTLY and locked the transactions table for 22 minutes. We tried re-running it with "
        "CREATE INDEX CONCURRENTLY and that worked. Lesson: next time run schema migrations on staging with "
        "production-sized data first and always set lock_timeout.",
        _inc(102),
        "failure",
    )


def _expired_certificate(s: Sample) -> None:
    """INC-103: an expired webhook certificate."""
    tue = date(2025, 4, 8)
    s.add(
        at(tue, 7, 12),
        PRIYA,
        "pagerduty",
        "payments-prod",
        "incident_open",
        "INC-103 opened: Stripe webhooks failing, the TLS certificate on hooks.acme.dev expired overnight.",
        _inc(103),
    )
    s.add(
        at(tue, 7, 50),
        PRIYA,
        "pagerduty",
        "payments-prod",
        "incident_resolve",
        "INC-103 resolved: certificate renewed, Stripe retried the failed webhooks.",
        _inc(103),
        "success",
    )
    s.add(
        at(tue, 15, 0),
        PRIYA,
        "slack",
        "#incidents",
        "postmortem",
        "Postmortem INC-103 (webhooks down, 8 April). Root cause: the certificate on hooks.acme.dev was renewed "
        "by hand and nobody tracked its expiry. Lesson: we now alert 30 days before any certificate expires.",
        _inc(103),
        "failure",
    )


def _the_end(s: Sample) -> None:
    """Leo keeps the new rule; the sample ends with Tom's run-up stopped after the merge."""
    s.pull(at(date(2025, 4, 10), 10, 30), LEO, WEB, PRIYA, "receipts page v2", outcome="success")
    s.add(
        at(date(2025, 4, 10), 12, 15),
        LEO,
        "slack",
        "#deploys",
        "message",
        "hey! deployed acme/web before 3pm as agreed, all green thx",
        "slack:#deploys:2025-04-10",
    )
    s.pull(at(date(2025, 4, 11), 13), TOM, API, MAYA, TOM_TITLES[-1], deploy=False)


def main() -> None:
    items = build()
    OUT.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items))
    print(f"wrote {len(items)} events to {OUT}")


if __name__ == "__main__":
    main()
