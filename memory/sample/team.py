"""The sample's team: its people, each one's voice on Slack, what Tom works on, and Sample, which records their
Slack, GitHub and PagerDuty activity as memory_add items following the connector conventions."""

import random
from datetime import UTC, date, datetime, timedelta

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
