"""A value the caller gave that an error's message names (a missing path, directory, place, passage id,
subject, attribute or author) is quoted only when it holds no secret; else the message names the secret's
kind. Messages are kept among Usage's last errors, shown to every role of the project: a secret pasted as a
path must not be kept and shown there."""

import pytest

from memory.models import RecentError
from memory.selectors import scoped
from tests.console import html, logged_in

AWS = "AKIAUJZDE8GXD6NCF10E"
REDACTED = "[redacted: AWS Access Key]"


@pytest.mark.parametrize(
    "tool, arguments, words",
    [
        ("read", {"path": f"passages/{AWS}.md"}, f"No file {REDACTED} in this memory."),
        ("ls", {"path": f"passages/{AWS}/"}, f"No directory {REDACTED} in this memory."),
        ("latest", {"place": AWS}, f"Nothing is in place {REDACTED}."),
        ("around", {"passage_id": AWS}, f"{REDACTED} is not a passage id"),
        ("history", {"subject": AWS}, f"No facts are recorded about {REDACTED}."),
        ("history", {"subject": "Ana", "attribute": AWS}, f"Nothing is recorded about Ana's {REDACTED}."),
    ],
)
def test_a_secret_given_as_a_path_or_a_name_is_never_kept_in_the_last_errors(
    alice, api, project, tool, arguments, words
):
    api.add({"text": "Ana lives in Porto.", "id": "home"})
    assert api.tool("history", subject="Ana").status_code == 200
    answer = api.tool(tool, **arguments)
    assert answer.status_code == 404 and words in answer.json()["message"]
    assert AWS not in answer.json()["message"]
    assert api.call(f"memory_{tool}", **arguments)["result"]["isError"] is True
    with scoped(project.pk):
        kept = [error.message for error in RecentError.objects.all()]
    assert len(kept) == 2 and all(REDACTED in message and AWS not in message for message in kept), kept
    assert AWS not in html(logged_in(alice).get(f"/projects/{project.slug}/usage"))
