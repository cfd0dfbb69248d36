"""The sample's stories, which the tests check by hand: the attempts with their outcomes, and the incidents
INC-101 (a Friday-afternoon deploy), INC-102 (a migration that locked a table) and INC-103 (an expired
certificate), each with its postmortem; and how the six weeks end."""

from datetime import date

from memory.sample.team import API, LEO, MAYA, PRIYA, SARA, TOM, TOM_TITLES, WEB, Sample, at


def stories(s: Sample) -> None:
    """The incidents, postmortems and attempts the tests check by hand, in the order they are written."""
    _attempts(s)
    _friday_deploy(s)
    _friday_postmortem(s)
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
    """INC-101: a Friday-afternoon deploy that broke checkout, and its rollback."""
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


def _friday_postmortem(s: Sample) -> None:
    """INC-101's postmortem on the Monday after, and the rule it made: "we now deploy before 3pm"."""
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
