<?php

declare(strict_types=1);

namespace PlatformApi;

use PlatformApi\Exception\InvalidArgumentException;

/** How a client sends requests: timeouts, retries and extra headers. Immutable; `with()` copies. */
final class ClientOptions
{
    /** @var (\Closure(float): void)|null */
    public readonly ?\Closure $sleep;
    /** @var (\Closure(): float)|null */
    public readonly ?\Closure $clock;

    /**
     * @param array<string, string> $headers extra headers on every request
     * @param (\Closure(float): void)|null $sleep how the client waits between retries, in seconds
     *     (tests pass one that records the delay and returns at once); default usleep()
     * @param (\Closure(): float)|null $clock the current Unix time in seconds, for OAuth token
     *     expiry; tests pass a fake one; default microtime(true)
     */
    public function __construct(
        /** Seconds per attempt, from connecting to the end of the body. */
        public readonly float $timeout = 60.0,
        /** Seconds to establish a connection. */
        public readonly float $connectTimeout = 10.0,
        /** Retries after the first attempt for failures that are safe to repeat; 0 disables retrying. */
        public readonly int $maxRetries = 2,
        /** Longest `Retry-After` (seconds) waited for; a longer one throws at once. */
        public readonly float $maxRetryAfter = 60.0,
        /** First backoff delay (seconds); doubles on each retry, up to maxRetryDelay, minus up to 25 % jitter. */
        public readonly float $initialRetryDelay = 0.5,
        public readonly float $maxRetryDelay = 8.0,
        /** Your application, sent before the SDK in `User-Agent`, e.g. `lms-sync/2.1`. */
        public readonly ?string $appInfo = null,
        public readonly array $headers = [],
        /** Give every POST a generated `Idempotency-Key`, so POSTs can be retried safely. */
        public readonly bool $idempotencyKeys = true,
        ?\Closure $sleep = null,
        ?\Closure $clock = null,
    ) {
        foreach (
            [
                'timeout' => $timeout, 'connectTimeout' => $connectTimeout, 'maxRetries' => $maxRetries,
                'maxRetryAfter' => $maxRetryAfter, 'initialRetryDelay' => $initialRetryDelay,
                'maxRetryDelay' => $maxRetryDelay,
            ] as $name => $value
        ) {
            if (!is_finite((float) $value) || $value < 0) {
                throw new InvalidArgumentException("ClientOptions: {$name} must be a number >= 0, got {$value}.");
            }
        }
        if ($timeout == 0 || $connectTimeout == 0) {
            throw new InvalidArgumentException(
                'ClientOptions: timeouts must be greater than 0; a request without one could hang forever.',
            );
        }
        $this->sleep = $sleep;
        $this->clock = $clock;
    }

    /**
     * A copy with the given options changed.
     *
     * @param array<string, string>|null $headers
     * @param (\Closure(float): void)|null $sleep
     * @param (\Closure(): float)|null $clock
     */
    public function with(
        ?float $timeout = null,
        ?float $connectTimeout = null,
        ?int $maxRetries = null,
        ?float $maxRetryAfter = null,
        ?float $initialRetryDelay = null,
        ?float $maxRetryDelay = null,
        ?string $appInfo = null,
        ?array $headers = null,
        ?bool $idempotencyKeys = null,
        ?\Closure $sleep = null,
        ?\Closure $clock = null,
    ): self {
        return new self(
            $timeout ?? $this->timeout,
            $connectTimeout ?? $this->connectTimeout,
            $maxRetries ?? $this->maxRetries,
            $maxRetryAfter ?? $this->maxRetryAfter,
            $initialRetryDelay ?? $this->initialRetryDelay,
            $maxRetryDelay ?? $this->maxRetryDelay,
            $appInfo ?? $this->appInfo,
            $headers ?? $this->headers,
            $idempotencyKeys ?? $this->idempotencyKeys,
            $sleep ?? $this->sleep,
            $clock ?? $this->clock,
        );
    }
}
