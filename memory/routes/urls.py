from django.urls import path

from ..portability.api import ExportView, ImportJobView, ImportView
from ..tools import TOOLS
from .api import tool_view

urlpatterns = [
    path(f"v1/memory/{tool.route}", tool_view(tool), name=f"memory-{tool.route}")
    for tool in TOOLS
    if not tool.local_only
]
# Not tools: one streams its answer, the other its body (memory/portability/api.py).
urlpatterns += [
    path("v1/memory/export", ExportView.as_view(), name="memory-export"),
    path("v1/memory/import", ImportView.as_view(), name="memory-import"),
    path("v1/memory/import/<str:job>", ImportJobView.as_view(), name="memory-import-job"),
]
