<?php

declare(strict_types=1);

namespace PlatformApi\Core;

/**
 * Every change of a change feed after a cursor, as `$client->events->follow(['after' => …])`
 * returns it: `foreach` yields the changes oldest first, reading page after page and, once caught
 * up, long-polling (`wait`, 30 s by default) for the next one. `$follower->cursor` is the place
 * after the last change yielded: save it after applying a change, and `follow(['after' => $cursor])`
 * resumes there with nothing skipped or repeated. With `until_caught_up` the loop ends once a
 * read finds nothing new; otherwise it runs until you `break`.
 *
 * @template T of \PlatformApi\Webhook\EventInterface
 * @implements \IteratorAggregate<int, T>
 */
final class FeedFollower implements \IteratorAggregate
{
    /** Where the next change starts: the position of the last change yielded, or the start. */
    public string $cursor;

    /** @var \Closure(array<string, mixed>): object{data: list<T>, nextCursor: string, hasMore: bool} */
    private readonly \Closure $read;

    /** @var array<string, mixed> */
    private readonly array $query;

    private readonly bool $untilCaughtUp;

    /**
     * @param \Closure(array<string, mixed>): object{data: list<T>, nextCursor: string, hasMore: bool} $read
     *     one read of the feed
     * @param array{
     *     after?: string,
     *     limit?: int,
     *     type?: string|list<string>,
     *     wait?: string,
     *     until_caught_up?: bool,
     * } $params
     */
    public function __construct(\Closure $read, array $params = [])
    {
        $this->read = $read;
        $this->cursor = (string) ($params['after'] ?? '0');
        $this->untilCaughtUp = (bool) ($params['until_caught_up'] ?? false);
        unset($params['after'], $params['until_caught_up']);
        // Caught up is known from one read that does not wait; a live follower waits.
        $this->query = $params + ['wait' => $this->untilCaughtUp ? '0s' : '30s'];
    }

    /** @return \Generator<int, T> */
    public function getIterator(): \Generator
    {
        for (;;) {
            $page = ($this->read)(['after' => $this->cursor] + $this->query);
            $count = count($page->data);
            foreach ($page->data as $index => $change) {
                $position = $change->toArray()['position'] ?? null;
                if (is_int($position)) {
                    $this->cursor = (string) $position;
                }
                // The page's end may lie past its last change (types this token does not read).
                if ($index === $count - 1) {
                    $this->cursor = $page->nextCursor;
                }
                yield $change;
            }
            if ($count === 0) {
                $this->cursor = $page->nextCursor;
                if ($this->untilCaughtUp && !$page->hasMore) {
                    return;
                }
            }
        }
    }
}
