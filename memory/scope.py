"""The scope of a transaction: the only place it is set (docs/architecture.md "Tenancy, twice").

PostgreSQL's row-level security on the memory tables (memory/migrations/0008) shows and accepts only the
rows of the project, and when one is named the end user, that the transaction's scope names: two settings,
`twin.project` and `twin.end_user`, set first thing in the transaction and for it alone (set_config(…,
true)), so a connection handed back, or to the next caller of a pool, carries none. memory/selectors.py
re-exports `scoped`; a read by a key takes `scoped_to_account`, which finds the end user and sets the scope
in one round trip.
"""

import contextlib
from collections.abc import Callable, Iterator

from django.db import connection, transaction

from accounts.models import EndUser


class ScopeConflict(RuntimeError):
    """A scope opened inside another one's transaction: one transaction serves one scope."""


_SET_SCOPE = "SELECT set_config('twin.project', %s, true), set_config('twin.end_user', %s, true)"
_CURRENT_SCOPE = (
    "SELECT coalesce(current_setting('twin.project', true), '') AS project, "
    "coalesce(current_setting('twin.end_user', true), '') AS end_user"
)
# The end user named `account` in the project and, only when there is one (set_config runs once per row
# returned), the scope set to them: the lookup and _SET_SCOPE in one statement.
_SCOPE_OF_ACCOUNT = """
SELECT e.id, e.project_id, e.external_id, e.created_at, e.last_active_at,
    set_config('twin.project', e.project_id::text, true) AS project_scope,
    set_config('twin.end_user', e.id::text, true) AS end_user_scope
FROM accounts_enduser e WHERE e.project_id = %(project)s AND e.external_id = %(account)s
"""
_END_USER_FIELDS = ["id", "project_id", "external_id", "created_at", "last_active_at"]


@contextlib.contextmanager
def scoped(project_id: int, end_user_id: int | None = None):
    """A transaction scoped to one project and, given one, one end user.

    Inside the same scope's transaction, this is a savepoint; inside a transaction of no scope, it scopes
    the block and clears the scope after it; inside another scope, ScopeConflict.
    """
    wanted = {"project": str(int(project_id)), "end_user": "" if end_user_id is None else str(int(end_user_id))}
    nested = connection.in_atomic_block
    with transaction.atomic():
        outer = _current_scope() if nested else {"project": "", "end_user": ""}
        if outer == wanted:
            yield
            return
        if outer["project"]:
            raise ScopeConflict(f"Scope {wanted} asked for inside the transaction of scope {outer}.")
        with connection.cursor() as cursor:
            cursor.execute(_SET_SCOPE, [wanted["project"], wanted["end_user"]])
        yield
        if nested:  # the outer transaction goes on: it leaves the block as unscoped as it came in
            with connection.cursor() as cursor:
                cursor.execute(_SET_SCOPE, ["", ""])


@contextlib.contextmanager
def scoped_to_account(project_id: int, account: str) -> Iterator[Callable[[], EndUser | None]]:
    """A transaction to be scoped to the project's end user named `account`. Yields `find`, which, called
    once, finds them and sets the scope in one round trip (where finding them and then `scoped` take two),
    and returns them; None, with no scope set, when the project has no such end user. Nothing is sent before
    `find` is called, so the caller may start other work first. Inside a transaction already (a command's, a
    test's), `find` finds the end user and then takes `scoped`, which checks the transaction's own scope."""
    with contextlib.ExitStack() as stack:
        if connection.in_atomic_block:

            def find() -> EndUser | None:
                end_user = EndUser.objects.filter(project_id=project_id, external_id=account).first()
                if end_user is not None:
                    stack.enter_context(scoped(project_id, end_user.pk))
                return end_user

            yield find
            return
        stack.enter_context(transaction.atomic())

        def find_and_scope() -> EndUser | None:
            with connection.cursor() as cursor:
                cursor.execute(_SCOPE_OF_ACCOUNT, {"project": int(project_id), "account": account})
                row = cursor.fetchone()
                if row is None:
                    return None
                found = dict(zip([column.name for column in cursor.description], row, strict=True))
            return EndUser.from_db(connection.alias, _END_USER_FIELDS, [found[f] for f in _END_USER_FIELDS])

        yield find_and_scope


def _current_scope() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(_CURRENT_SCOPE)
        return dict(zip([column.name for column in cursor.description], cursor.fetchone(), strict=True))
