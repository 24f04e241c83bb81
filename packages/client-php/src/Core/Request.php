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
        /**
         * When set, a 2xx response's body is handed to it in chunks as it arrives instead of being
         * kept in Response::$body (which stays empty); other statuses are buffered as usual. A
         * transport that ignores it returns the body, and HttpClient hands that over in one piece.
         *
         * @var (\Closure(string): void)|null
         */
        public readonly ?\Closure $sink = null,
    ) {
    }
}
