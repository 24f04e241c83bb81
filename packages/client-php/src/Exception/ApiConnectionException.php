<?php

declare(strict_types=1);

namespace PlatformApi\Exception;

/** The API could not be reached (DNS, refused or reset connection, TLS), so there is no status. */
class ApiConnectionException extends PlatformException
{
    public function __construct(
        string $message,
        public readonly string $method = '',
        public readonly string $url = '',
        ?\Throwable $previous = null,
    ) {
        parent::__construct($message, 0, $previous);
    }
}
