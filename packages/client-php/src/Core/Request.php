<?php

declare(strict_types=1);

namespace PlatformApi\Core;

/** One HTTP request as the transport sends it. */
final class Request
{
    /**
     * @param array<string, string> $headers names in lower case
     */
    public function __construct(
        public readonly string $method,
        public readonly string $url,
        public readonly array $headers,
        public readonly ?string $body,
        /** Seconds for the whole exchange, body included. */
        public readonly float $timeout,
        /** Seconds to establish the connection. */
        public readonly float $connectTimeout,
    ) {
    }
}
