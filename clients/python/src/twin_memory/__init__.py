"""twin memory's Python client: long-term memory for AI assistants, over its HTTP API.

from twin_memory import TwinMemory
client = TwinMemory(api_key="tm_…", account="user_42", base_url="https://…")
client.add(items=[{"text": "I moved to Porto"}], wait=True)
client.search(query="Where do I live?")
"""

from ._client import AsyncTwinMemory, TwinMemory
from ._errors import (
    ApiError,
    Conflict,
    ConnectionFailed,
    InsufficientScope,
    InvalidArguments,
    NoMemory,
    NotFound,
    RateLimited,
    ServerError,
    TimedOut,
    TooLarge,
    TwinMemoryError,
    Unauthorized,
    Unavailable,
)
from ._version import VERSION

__version__ = VERSION
__all__ = [
    "ApiError",
    "AsyncTwinMemory",
    "Conflict",
    "ConnectionFailed",
    "InsufficientScope",
    "InvalidArguments",
    "NoMemory",
    "NotFound",
    "RateLimited",
    "ServerError",
    "TimedOut",
    "TooLarge",
    "TwinMemory",
    "TwinMemoryError",
    "Unauthorized",
    "Unavailable",
]
