<?php

declare(strict_types=1);

namespace PlatformApi\Exception;

/** 401: missing, malformed, unknown, expired or revoked token. */
class AuthenticationException extends ApiStatusException
{
}
