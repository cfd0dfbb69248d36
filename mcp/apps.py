from django.apps import AppConfig


class McpConfig(AppConfig):
    name = "mcp"
    label = "mcp"
