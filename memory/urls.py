from django.urls import path

from .api import tool_view
from .tools import TOOLS

urlpatterns = [path(f"v1/memory/{tool.route}", tool_view(tool), name=f"memory-{tool.route}") for tool in TOOLS
               if not tool.local_only]
