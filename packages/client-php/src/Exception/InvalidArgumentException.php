<?php

declare(strict_types=1);

namespace PlatformApi\Exception;

/** A call or a client option the SDK refuses before sending anything (bad base URL, no token, …). */
class InvalidArgumentException extends \InvalidArgumentException implements ExceptionInterface
{
}
