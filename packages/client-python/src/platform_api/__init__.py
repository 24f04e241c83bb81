"""The official Python client of the Platform API.

```python
import platform_api

client = platform_api.PlatformClient(token="pat_...", base_url="https://api.example.com")
student = client.students.create(student_number="S-1", first_name="Ada", last_name="Lovelace")
```
"""

from . import types
from ._async_client import AsyncPlatformClient
from ._client import PlatformClient
from ._core._auth import Auth, ClientCredentials, OAuthTokens, RefreshToken, StaticToken
from ._core._deprecation import APIDeprecationWarning
from ._core._http import Headers, HTTPClientTransport, HTTPRequest, HTTPResponse, Transport
from ._core._pagination import AsyncPage, SyncPage
from ._core._response import APIResponse
from ._exceptions import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    ConflictError,
    CursorExpiredError,
    FieldError,
    NotFoundError,
    OAuthError,
    PermissionDeniedError,
    PlatformError,
    RateLimitError,
    ServerError,
    ValidationError,
    WebhookVerificationError,
)
from ._models import BaseModel, FrozenInstanceError
from ._operations import OPERATIONS, OperationInfo
from ._types import Omit, RequestOptions, omit
from ._version import __version__
from .types import Event, UnknownEvent
from .webhooks import Webhook, Webhooks
from .export_helpers import (
    collection_checksum,
    download_export,
    download_export_async,
    wait_for_export,
    wait_for_export_async,
)

__all__ = [
    "__version__",
    "PlatformClient",
    "AsyncPlatformClient",
    "types",
    # auth
    "Auth",
    "StaticToken",
    "ClientCredentials",
    "RefreshToken",
    "OAuthTokens",
    # transport and responses
    "Transport",
    "HTTPClientTransport",
    "HTTPRequest",
    "HTTPResponse",
    "Headers",
    "APIResponse",
    "SyncPage",
    "AsyncPage",
    "RequestOptions",
    "Omit",
    "omit",
    # models
    "BaseModel",
    "FrozenInstanceError",
    "Event",
    "UnknownEvent",
    # errors
    "PlatformError",
    "APIConnectionError",
    "APITimeoutError",
    "APIStatusError",
    "ValidationError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "ConflictError",
    "CursorExpiredError",
    "RateLimitError",
    "ServerError",
    "OAuthError",
    "FieldError",
    "WebhookVerificationError",
    "APIDeprecationWarning",
    # webhooks
    "Webhook",
    "Webhooks",
    # exports
    "wait_for_export",
    "download_export",
    "wait_for_export_async",
    "download_export_async",
    "collection_checksum",
    # operations
    "OPERATIONS",
    "OperationInfo",
]
