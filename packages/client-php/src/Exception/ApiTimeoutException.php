<?php

declare(strict_types=1);

namespace PlatformApi\Exception;

/** No complete response arrived within the timeout (connect or total). */
class ApiTimeoutException extends ApiConnectionException
{
}
