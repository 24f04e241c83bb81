<?php

declare(strict_types=1);

namespace PlatformApi\Core;

/** One HTTP response as the transport received it. */
final class Response
{
    /**
     * @param array<string, list<string>> $headers names in lower case, every value of repeated headers
     */
    public function __construct(
        public readonly int $status,
        public readonly array $headers,
        public readonly string $body,
    ) {
    }
}
