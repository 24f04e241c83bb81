<?php

declare(strict_types=1);

namespace PlatformApi\Core;

/**
 * When to retry and how long to wait. Pure functions, so the maths is unit-tested on its own
 * (the Stainless PHP core lost fractional sleeps and inverted HTTP-date Retry-After: sdks.md §3.7).
 */
final class Retry
{
    /** Methods a repeated request cannot change the outcome of (RFC 9110 §9.2.2). */
    public const IDEMPOTENT_METHODS = ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'];

    /**
     * Seconds to wait before retry number `$retry + 1`: `initial × 2^retry`, capped at `max`,
     * minus up to 25 % jitter so clients that failed together do not come back together.
     *
     * @param float|null $random in [0, 1); default a fresh random number
     */
    public static function backoff(int $retry, float $initial = 0.5, float $max = 8.0, ?float $random = null): float
    {
        $random ??= mt_rand() / (mt_getrandmax() + 1);
        $base = min($initial * (2 ** max(0, $retry)), $max);
        return $base * (1 - 0.25 * $random);
    }

    /**
     * `Retry-After` as seconds from now: delay-seconds or an HTTP date (RFC 9110 §10.2.3). Null when
     * absent or unreadable; a date in the past is 0.
     */
    public static function parseRetryAfter(?string $value, ?float $now = null): ?float
    {
        if ($value === null) {
            return null;
        }
        $value = trim($value);
        if (preg_match('/^\d{1,10}$/', $value) === 1) {
            return (float) $value;
        }
        $utc = new \DateTimeZone('UTC');
        // IMF-fixdate, then the two obsolete forms a recipient must still accept.
        foreach (['D, d M Y H:i:s \G\M\T', 'l, d-M-y H:i:s \G\M\T', 'D M j H:i:s Y'] as $format) {
            $date = \DateTimeImmutable::createFromFormat('!' . $format, $value, $utc);
            if ($date !== false) {
                $now ??= microtime(true);
                return max(0.0, (float) $date->format('U.u') - $now);
            }
        }
        return null;
    }

    /**
     * How long to wait before repeating a request that got `$status`, or null when it must not be
     * repeated (or the wait asked for is longer than `$maxRetryAfter`).
     *
     * @param array<string, list<string>> $headers response headers, lower-case names
     * @param bool $retriable the request is safe to repeat: an idempotent method, or it carries an Idempotency-Key
     * @param bool $keyed the request carries an Idempotency-Key
     */
    public static function delay(
        int $status,
        array $headers,
        bool $retriable,
        bool $keyed,
        int $retry,
        float $initial,
        float $max,
        float $maxRetryAfter,
    ): ?float {
        $shouldRetry = strtolower(trim($headers['x-should-retry'][0] ?? ''));
        $retryAfter = self::parseRetryAfter($headers['retry-after'][0] ?? null);
        // The server's word wins (X-Should-Retry). 429: the request was not processed, so even a
        // POST may be repeated. A 409 with Retry-After to a keyed request: an attempt with the
        // same key is still running. 501 and 505 never change.
        $transient = match (true) {
            $shouldRetry === 'false' => false,
            $shouldRetry === 'true' => true,
            $status === 429 => true,
            $status === 409 => $keyed && $retryAfter !== null,
            $status === 408, $status >= 500 && !in_array($status, [501, 505], true) => $retriable,
            default => false,
        };
        if (!$transient) {
            return null;
        }
        if ($retryAfter === null) {
            return self::backoff($retry, $initial, $max);
        }
        // Waiting less than asked only earns another 429; waiting longer than allowed is the caller's call.
        return $retryAfter <= $maxRetryAfter ? $retryAfter : null;
    }
}
