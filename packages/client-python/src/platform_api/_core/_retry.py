"""When to retry and how long to wait: kept apart from the request loop so the maths is unit-tested."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Optional

from .._exceptions import parse_retry_after
from ._http import Headers

__all__ = ["RetryPolicy", "backoff_delay", "retry_delay"]


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 2
    """Retries after the first attempt; 0 disables retrying."""
    initial_delay: float = 0.5
    """First backoff delay in seconds; doubles per retry."""
    max_delay: float = 8.0
    """Upper bound of one backoff delay."""
    max_retry_after: float = 60.0
    """Longest `Retry-After` waited for; a longer one raises at once."""


def backoff_delay(
    attempt: int, policy: RetryPolicy, rand: Callable[[], float] = random.random
) -> float:
    """`initial · 2^attempt`, capped, times a factor in [0.5, 1] so clients that failed together
    spread out (the TypeScript SDK's jitter). `attempt` counts from 0 for the first retry."""
    base = min(policy.initial_delay * (2.0 ** attempt), policy.max_delay)
    return base * (0.5 + rand() / 2.0)


def retry_delay(
    status: int,
    headers: Headers,
    *,
    replayable: bool,
    keyed: bool,
    attempt: int,
    policy: RetryPolicy,
    rand: Callable[[], float] = random.random,
    now: Optional[float] = None,
) -> Optional[float]:
    """Seconds to wait before repeating a request that got `status`, or None: do not repeat.

    - 429: the request was not processed, so any method is repeated.
    - 408 and 5xx (but 501/505, which never change): only when repeating is harmless, i.e. a
      replayable method or a request carrying an `Idempotency-Key`.
    - 409 with `Retry-After` on a keyed request: an earlier attempt with the same key is still
      running on the server; waiting gets its response.
    - `X-Should-Retry: true|false` from the server overrides the above.
    - `Retry-After` (seconds or HTTP date) is obeyed up to `max_retry_after`; a longer wait is
      the caller's decision, so None is returned and the error raised.
    """
    should = (headers.get("x-should-retry") or "").strip().lower()
    if should == "false":
        return None
    transient = (
        status == 429
        or (replayable and (status == 408 or (status >= 500 and status not in (501, 505))))
        or (status == 409 and keyed and "retry-after" in headers)
    )
    if not transient and should != "true":
        return None
    retry_after = parse_retry_after(headers.get("retry-after"), now)
    if retry_after is None:
        return backoff_delay(attempt, policy, rand)
    return retry_after if retry_after <= policy.max_retry_after else None
