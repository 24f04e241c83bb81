<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PlatformApi\Core\Cursor;
use PlatformApi\Exception\ApiConnectionException;
use PlatformApi\Exception\InvalidArgumentException;
use PlatformApi\PlatformClient;

/**
 * `$client->changes->follow()` across the API server stopped for 10 s and started again (the
 * harness's PLATFORM_CONTROL_URL): the follower retries through the outage, and every change is
 * yielded once, in position order; the saved cursor resumes after the restart.
 */
final class FollowRestartLiveTest extends LiveTestCase
{
    /** The cursor after the last change now in the feed. */
    private static function head(PlatformClient $client): string
    {
        $follower = $client->changes->follow(['after' => 0, 'until_caught_up' => true, 'limit' => 1000]);
        foreach ($follower as $_) {
        }
        return $follower->cursor;
    }

    /** The position a cursor names: the number before the dot. */
    private static function positionOf(string $cursor): int
    {
        self::assertMatchesRegularExpression(Cursor::PATTERN, $cursor);
        return (int) explode('.', $cursor)[0];
    }

    /** POST /restart?down=… on the harness's control endpoint: answers once the server is down. */
    private static function restart(int $down): void
    {
        $curl = curl_init(self::env('PLATFORM_CONTROL_URL') . "/restart?down={$down}");
        curl_setopt_array($curl, [CURLOPT_POST => true, CURLOPT_RETURNTRANSFER => true, CURLOPT_TIMEOUT => 30]);
        $body = curl_exec($curl);
        $status = curl_getinfo($curl, CURLINFO_RESPONSE_CODE);
        curl_close($curl);
        self::assertSame(202, $status, 'restart: ' . (is_string($body) ? $body : 'no answer'));
    }

    /**
     * @param iterable<\PlatformApi\Webhook\EventInterface> $follower
     * @return list<array{int, string, string}> position, type, the changed resource's id
     */
    private static function collect(iterable $follower): array
    {
        $seen = [];
        foreach ($follower as $event) {
            $change = $event->toArray();
            $seen[] = [(int) $change['position'], (string) $change['type'], (string) ($change['data']['id'] ?? '')];
        }
        return $seen;
    }

    public function testFollowRetriesThroughARestartWithNothingLostOrRepeated(): void
    {
        $client = self::client();
        $cursor = self::head($client);
        $created = [];
        for ($i = 0; $i < 5; $i++) {
            $created[] = self::newCourse($client)->id;
        }

        self::restart(10);
        // The server is down now: a read fails at once.
        try {
            $client->changes->list(['after' => $cursor], new \PlatformApi\RequestOptions(maxRetries: 0));
            self::fail('expected the server to be down');
        } catch (ApiConnectionException) {
        }

        $retries = [];
        $started = microtime(true);
        $follower = $client->changes->follow(
            ['after' => $cursor, 'limit' => 2, 'until_caught_up' => true],
            maxRetryDelay: 2.0,
            onRetry: function (\Throwable $error, int $attempt, float $delay) use (&$retries): void {
                $retries[] = [$error, $attempt, $delay];
            },
        );
        $seen = self::collect($follower);

        self::assertNotEmpty($retries, 'onRetry was never called: the outage did not happen');
        self::assertInstanceOf(ApiConnectionException::class, $retries[0][0]);
        self::assertGreaterThan(5.0, microtime(true) - $started);
        self::assertSame($created, array_column($seen, 2));
        self::assertSame(array_fill(0, 5, 'course.created'), array_column($seen, 1));
        $positions = array_column($seen, 0);
        self::assertSame(range(self::positionOf($cursor) + 1, self::positionOf($cursor) + 5), $positions);

        // After the restart: the saved cursor yields exactly what was written since.
        $saved = $follower->cursor;
        $later = [];
        for ($i = 0; $i < 3; $i++) {
            $later[] = self::newCourse($client)->id;
        }
        $resumed = self::collect($client->changes->follow(['after' => $saved, 'until_caught_up' => true]));
        self::assertSame($later, array_column($resumed, 2));
        self::assertSame(range(self::positionOf($saved) + 1, self::positionOf($saved) + 3), array_column($resumed, 0));
    }

    public function testCursorsAreAcceptedAsTheFeedGivesThem(): void
    {
        $client = self::client();
        $cursor = self::head($client);
        $course = self::newCourse($client);
        $page = $client->changes->list(['after' => $cursor]);
        $change = $page->data[0]->toArray();
        self::assertSame($course->id, $change['data']['id'] ?? null);
        // The page ends at its last change: next_cursor is that change's cursor, naming its position.
        self::assertSame($page->nextCursor, $change['cursor']);
        self::assertSame($change['position'], self::positionOf($change['cursor']));
        // After the event's cursor there is nothing yet; up to it, the read ends at it.
        $after = $client->changes->list(['after' => $change['cursor']]);
        self::assertSame([], $after->data);
        self::assertSame($change['cursor'], $after->nextCursor);
        $upTo = $client->changes->list(['after' => $cursor, 'until' => $change['cursor']]);
        self::assertSame([$change['id']], array_map(static fn ($e) => $e->toArray()['id'], $upTo->data));
        // '0' (or 0) is the start of the feed; 'oldest': nothing on the live server is older than
        // kept, so it is the start too.
        $zero = $client->changes->list(['after' => '0', 'limit' => 1]);
        self::assertSame($zero->toArray(), $client->changes->list(['after' => 0, 'limit' => 1])->toArray());
        $oldest = $client->changes->list(['after' => 'oldest', 'limit' => 1]);
        self::assertSame(1, $oldest->data[0]->toArray()['position'] ?? null);
        self::assertSame($zero->toArray(), $oldest->toArray());
        self::assertSame(1, self::positionOf($oldest->nextCursor));
    }

    public function testFollowWithoutACursorIsRefusedBeforeAnyRequest(): void
    {
        $this->expectException(InvalidArgumentException::class);
        $this->expectExceptionMessage("'oldest'");
        self::client()->changes->follow(['until_caught_up' => true]);
    }
}
