"""GET /readyz: 200 when this process can serve (database, migrations, model); 503 naming what is missing;
Redis and the workers reported in the body, never failing it. /healthz is unchanged."""

from django.test import Client

from memory.model import embeddings, encoder


def test_ready_once_the_model_is_loaded_and_not_before(transactional_db):
    encoder._model.cache_clear()  # a process that has not loaded the model yet
    refused = Client().get("/readyz")
    assert refused.status_code == 503
    assert refused.json()["model"] == "not loaded" and refused.json()["status"] == "not ready"
    embeddings.warm_up()
    ready = Client().get("/readyz")
    assert ready.status_code == 200, ready.json()
    body = ready.json()
    assert body["database"] == "ok" and body["migrations"] == "ok" and body["model"] == "ok"
    assert body["redis"] == "ok" and body["workers"] == "in process"


def test_redis_down_is_reported_but_does_not_fail_readiness(transactional_db, settings):
    embeddings.warm_up()
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    answer = Client().get("/readyz")
    assert answer.status_code == 200 and answer.json()["redis"].startswith("down")
    assert Client().get("/healthz").status_code == 503, "liveness still names Redis down, as before"
