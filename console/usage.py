"""Usage: per day, requests by tool and by key, items added, model calls made; and the last errors."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from memory.selectors import scoped

from .access import project_for
from .security import console_page
from .selectors import USAGE_DAYS, recent_errors, usage_of_project


@console_page
@login_required
def usage(request, slug: str):
    project = project_for(request, slug, "view_usage")
    try:
        days = int(request.GET.get("days", USAGE_DAYS[0]))
    except ValueError:
        days = USAGE_DAYS[0]
    if days not in USAGE_DAYS:
        days = USAGE_DAYS[0]
    with scoped(project.pk):  # the usage tables show a project only its own rows
        return render(
            request,
            "console/usage.html",
            {
                "project": project,
                "days": days,
                "day_choices": USAGE_DAYS,
                "usage": usage_of_project(project=project, days=days),
                "errors": recent_errors(project=project),
            },
        )
