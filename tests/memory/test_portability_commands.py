"""manage.py exportmemory and importmemory: an end user's memory moved between projects through a file,
with progress on standard error, and a bad file refused with nothing stored."""

import gzip
import io
import json

import pytest
from django.core.management import CommandError, call_command

from accounts.models import EndUser
from memory.management.progress import BAR_WIDTH


def run(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _items(path) -> list[dict]:
    return [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()[1:]]


def test_a_memory_moves_between_projects_through_a_file(api, project, other_project, tmp_path):
    api.add({"id": "n1", "text": "I live in Lisbon."}, {"id": "n2", "text": "I prefer green tea."})
    exported = tmp_path / "u_1.jsonl.gz"
    _, progress = run("exportmemory", project.slug, "u_1", "--out", str(exported))
    assert "Exported 2 items" in progress and "2/2 items exported" in progress
    assert f"[{'#' * BAR_WIDTH}]" in progress, "the same bar as importmemory's"
    out, progress = run("importmemory", other_project.slug, "moved", str(exported))
    assert "Imported 2 items into 'moved'" in out and "(2 added)" in out and "2/2 items stored" in progress
    again = tmp_path / "moved.jsonl.gz"
    run("exportmemory", other_project.slug, "moved", "--out", str(again))
    assert _items(again) == _items(exported)


def test_a_bad_file_is_refused_and_nothing_is_stored(project, other_project, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "twin-memory-export", "version": 1}\n{"item": {"id": "n1"}}\n')
    with pytest.raises(CommandError, match="line 2: item.text: required"):
        run("importmemory", other_project.slug, "moved", str(bad))
    assert not EndUser.objects.filter(external_id="moved").exists()
    with pytest.raises(CommandError, match="No project"):
        run("importmemory", "nope", "moved", str(bad))
    with pytest.raises(CommandError, match="no end user"):
        run("exportmemory", project.slug, "nobody")
