<?php

declare(strict_types=1);

namespace PlatformApi;

/**
 * Options for one call, given as the last argument of any method:
 * `$client->payments->create($params, new RequestOptions(idempotencyKey: $order->id))`.
 * Kept apart from the API parameters so the two can never collide.
 */
final class RequestOptions
{
    /**
     * @param array<string, string> $headers extra headers for this call (they win over the client's)
     */
    public function __construct(
        public readonly array $headers = [],
        /** The `Idempotency-Key` of a POST, instead of a generated one: e.g. your own record's id, so a repeat after a crash is recognised. */
        public readonly ?string $idempotencyKey = null,
        /** Seconds per attempt for this call. */
        public readonly ?float $timeout = null,
        public readonly ?float $connectTimeout = null,
        /** Retries for this call; 0 disables retrying. */
        public readonly ?int $maxRetries = null,
    ) {
    }
}
