<?php

declare(strict_types=1);

namespace PlatformApi\Exception;

use PlatformApi\Core\Retry;

/** 429: the organization is over its rate limit. Thrown once the retries are used up. */
class RateLimitException extends ApiStatusException
{
    /** Seconds the server asked to wait (`Retry-After`, seconds or an HTTP date), if it said. */
    public readonly ?int $retryAfter;

    /** @param array<string, list<string>> $headers */
    public function __construct(int $statusCode, array $headers, string $body, string $method = '', string $url = '')
    {
        parent::__construct($statusCode, $headers, $body, $method, $url);
        $seconds = Retry::parseRetryAfter($headers['retry-after'][0] ?? null);
        $this->retryAfter = $seconds === null ? null : (int) ceil($seconds);
    }
}
