"""The Grafana dashboard and the Prometheus alert rules in docs/monitoring name only metrics the service
exports: a renamed metric fails here, not silently on an operator's screen."""

import json
import re
from pathlib import Path

import yaml
from django.conf import settings
from prometheus_client import REGISTRY

from memory.observe import BacklogCollector

DOCS = Path(settings.BASE_DIR) / "docs" / "monitoring"
NAME = re.compile(r"\btwin_[a-z_]+\b")


def exported() -> set[str]:
    """Every sample name the service can export: the registry's and the backlog's (read at each scrape)."""
    names = set()
    for family in REGISTRY.collect():
        if family.name.startswith("twin_"):
            suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_sum", "_count"]}.get(family.type, [""])
            names |= {family.name + suffix for suffix in suffixes}
    return names | {f"twin_read_backlog_{name}" for name in ("items", "characters", "oldest_seconds")}


def test_every_expression_names_an_exported_metric(transactional_db):
    assert {family.name for family in BacklogCollector().collect()} <= exported()
    dashboard = json.loads((DOCS / "grafana-dashboard.json").read_text())
    expressions = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    alerts = yaml.safe_load((DOCS / "alerts.yml").read_text())
    expressions += [rule["expr"] for group in alerts["groups"] for rule in group["rules"]]
    assert len(expressions) == 23
    for expression in expressions:
        named = set(NAME.findall(expression))
        assert named and named <= exported(), (expression, named - exported())
