<?php

declare(strict_types=1);

namespace PlatformApi\Exception;

/** 409: conflicts with the current state (`conflict`, `invalid_state_transition`), or an idempotency key reused for another request. */
class ConflictException extends ApiStatusException
{
}
