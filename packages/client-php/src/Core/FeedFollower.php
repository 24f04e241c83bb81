<?php

declare(strict_types=1);

namespace PlatformApi\Core;

use PlatformApi\Exception\ApiConnectionException;
use PlatformApi\Exception\ApiStatusException;
use PlatformApi\Exception\InvalidArgumentException;
use PlatformApi\RequestOptions;

/**
 * Every change of a change feed after a cursor, as `$client->events->follow(['after' => …])`
 * returns it: `foreach` yields the changes oldest first, reading page after page and, once caught
 * up, long-polling (`wait`, 30 s by default) for the next one. `$follower->cursor` is the place
 * after the last change yielded (that change's `cursor`, an opaque string bound to the
 * organization): save it after applying a change, and `follow(['after' => $cursor])` resumes there
 * with nothing skipped or repeated. With `until_caught_up` the loop ends once a read finds nothing
 * new; otherwise it runs until you `break`.
 *
 * A read that fails for a reason that passes (no connection, a timeout, 429, any 5xx) is repeated
 * after a wait, for as long as it takes unless `giveUpAfter` says otherwise: attempt n (0-based,
 * back to 0 after a read succeeds) waits min(maxRetryDelay, 0.5 × 2^n) seconds, randomized in
 * [half, all] of it, or the response's `Retry-After` (at most 60 s). Any other error ends the loop.
 *
 * @template T of \PlatformApi\Webhook\EventInterface
 * @implements \IteratorAggregate<int, T>
 */
final class FeedFollower implements \IteratorAggregate
{
    /** The longest `Retry-After` obeyed, in seconds. */
    public const MAX_RETRY_AFTER = 60.0;

    /**
     * Where the next change starts: the `cursor` of the last change yielded (or the page's
     * `next_cursor` after a page's last change), else the cursor it started after.
     */
    public string $cursor;

    /** @var \Closure(array<string, mixed>, ?RequestOptions): object{data: list<T>, nextCursor: string, hasMore: bool} */
    private readonly \Closure $read;

    /** @var array<string, mixed> */
    private readonly array $query;

    private readonly bool $untilCaughtUp;
    /**
     * Where the loop ends (`'until' =>`), if anywhere: a reconciliation's end. The API hands out
     * one cursor per place, so the follower is there when its cursor equals it.
     */
    private readonly ?string $until;

    /** Each read's options: the caller's headers and timeouts, no retries of its own. */
    private readonly RequestOptions $options;

    /** @var (\Closure(\Throwable, int, float): mixed)|null */
    private readonly ?\Closure $onRetry;

    /**
     * @param \Closure(array<string, mixed>, ?RequestOptions): object{
     *     data: list<T>,
     *     nextCursor: string,
     *     hasMore: bool,
     * } $read one read of the feed
     * @param array{
     *     after?: string|int,
     *     until?: string|int,
     *     limit?: int,
     *     type?: string|list<string>,
     *     wait?: string,
     *     until_caught_up?: bool,
     * } $params
     * @param (callable(\Throwable, int, float): mixed)|null $onRetry
     */
    public function __construct(
        \Closure $read,
        array $params,
        ?RequestOptions $options = null,
        private readonly float $maxRetryDelay = 10.0,
        private readonly ?float $giveUpAfter = null,
        ?callable $onRetry = null,
    ) {
        if (!array_key_exists('after', $params)) {
            throw new InvalidArgumentException(
                "follow() needs a cursor to start after: pass 'after' => an export's cursor (POST /v1/exports), "
                . "a saved \$follower->cursor, an event's cursor, or 'oldest' for the oldest change still kept.",
            );
        }
        if (is_nan($maxRetryDelay) || $maxRetryDelay < 0) {
            throw new InvalidArgumentException('maxRetryDelay must be a number of seconds ≥ 0.');
        }
        if ($giveUpAfter !== null && (is_nan($giveUpAfter) || $giveUpAfter < 0)) {
            throw new InvalidArgumentException('giveUpAfter must be a number of seconds ≥ 0, or null for never.');
        }
        $this->read = $read;
        $this->cursor = Cursor::check($params['after']);
        $this->untilCaughtUp = (bool) ($params['until_caught_up'] ?? false);
        $this->until = array_key_exists('until', $params) ? Cursor::check($params['until'], 'until') : null;
        unset($params['after'], $params['until_caught_up']);
        // Caught up is known from one read that does not wait; a live follower waits.
        $this->query = $params + ['wait' => $this->untilCaughtUp ? '0s' : '30s'];
        $this->options = new RequestOptions(
            headers: $options?->headers ?? [],
            timeout: $options?->timeout,
            connectTimeout: $options?->connectTimeout,
            maxRetries: 0,
        );
        $this->onRetry = $onRetry === null ? null : \Closure::fromCallable($onRetry);
    }

    /** @return \Generator<int, T> */
    public function getIterator(): \Generator
    {
        for (;;) {
            $page = $this->readWithRetries();
            $count = count($page->data);
            foreach ($page->data as $index => $change) {
                // The feed cursor just after this change, as the API gave it: a position alone is no cursor.
                $cursor = $change->toArray()['cursor'] ?? null;
                if (is_string($cursor) && $cursor !== '') {
                    $this->cursor = $cursor;
                }
                // The page's end may lie past its last change (types this token does not read).
                if ($index === $count - 1) {
                    $this->cursor = $page->nextCursor;
                }
                yield $change;
            }
            if ($count === 0) {
                $this->cursor = $page->nextCursor;
                if (($this->untilCaughtUp && !$page->hasMore) || $this->cursor === $this->until) {
                    return;
                }
            }
        }
    }

    /**
     * Seconds to wait before attempt `$attempt + 1`: capped exponential backoff with jitter, or what
     * the failed response's `Retry-After` asks for (at most MAX_RETRY_AFTER).
     *
     * @param float|null $random in [0, 1); default a fresh random number
     */
    public static function retryDelay(
        \Throwable $error,
        int $attempt,
        float $maxRetryDelay = 10.0,
        ?float $random = null,
    ): float {
        if ($error instanceof ApiStatusException) {
            $retryAfter = Retry::parseRetryAfter($error->header('retry-after'));
            if ($retryAfter !== null) {
                return min($retryAfter, self::MAX_RETRY_AFTER);
            }
        }
        $random ??= mt_rand() / (mt_getrandmax() + 1);
        $delay = min($maxRetryDelay, 0.5 * (2 ** min($attempt, 62)));
        return $delay / 2 + $delay / 2 * $random;
    }

    /** Whether waiting can fix what made a read fail. */
    public static function isRetryable(\Throwable $error): bool
    {
        return $error instanceof ApiConnectionException
            || ($error instanceof ApiStatusException && ($error->statusCode === 429 || $error->statusCode >= 500));
    }

    /** @return object{data: list<T>, nextCursor: string, hasMore: bool} */
    private function readWithRetries(): object
    {
        $attempt = 0;
        $failingSince = null;
        for (;;) {
            try {
                return ($this->read)(['after' => $this->cursor] + $this->query, $this->options);
            } catch (\Throwable $error) {
                if (!self::isRetryable($error)) {
                    throw $error;
                }
                $now = hrtime(true) / 1e9;
                $failingSince ??= $now;
                $delay = self::retryDelay($error, $attempt, $this->maxRetryDelay);
                if ($this->giveUpAfter !== null) {
                    $left = $this->giveUpAfter - ($now - $failingSince);
                    if ($left <= 0) {
                        throw $error;
                    }
                    // One last attempt when the time is up, not a wait past it.
                    $delay = min($delay, $left);
                }
                $attempt++;
                if ($this->onRetry !== null) {
                    ($this->onRetry)($error, $attempt, $delay);
                }
                usleep((int) round($delay * 1_000_000));
            }
        }
    }
}
