from django.apps import AppConfig


class McpConfig(AppConfig):
    name = "mcp_server"
    label = "mcp"
