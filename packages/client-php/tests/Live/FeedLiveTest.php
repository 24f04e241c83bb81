<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PlatformApi\PlatformClient;

/**
 * `$client->changes->follow()` against the real server: every change after the cursor once, in
 * feed order, resuming from the saved cursor.
 */
final class FeedLiveTest extends LiveTestCase
{
    private static function head(PlatformClient $client): string
    {
        $follower = $client->changes->follow(['after' => 0, 'until_caught_up' => true, 'limit' => 1000]);
        foreach ($follower as $_) {
        }
        return $follower->cursor;
    }

    public function testFollowReadsInOrderAndResumesFromTheCursor(): void
    {
        $client = self::client();
        $start = self::head($client);
        for ($i = 0; $i < 5; $i++) {
            self::newCourse($client);
        }
        $gone = self::newCourse($client);
        $client->courses->delete($gone->id);

        $seen = [];
        $first = $client->changes->follow(['after' => $start, 'limit' => 2, 'until_caught_up' => true]);
        foreach ($first as $event) {
            $seen[] = [$event->toArray()['position'], $event->eventType()];
            if (count($seen) === 3) {
                break;
            }
        }
        self::assertSame((string) ((int) $start + 3), $first->cursor);
        $rest = $client->changes->follow(['after' => $first->cursor, 'limit' => 2, 'until_caught_up' => true]);
        foreach ($rest as $event) {
            $seen[] = [$event->toArray()['position'], $event->eventType()];
        }
        $expected = [];
        for ($n = 1; $n <= 6; $n++) {
            $expected[] = [(int) $start + $n, 'course.created'];
        }
        $expected[] = [(int) $start + 7, 'course.deleted'];
        self::assertSame($expected, $seen);
        self::assertSame((string) ((int) $start + 7), $rest->cursor);
    }

    public function testAMalformedCursorIsRefusedNamingIt(): void
    {
        try {
            self::client()->changes->list(['after' => 'not-a-cursor']);
            self::fail('expected an InvalidArgumentException');
        } catch (\PlatformApi\Exception\InvalidArgumentException $e) {
            self::assertStringStartsWith('after must be a cursor', $e->getMessage());
        }
    }
}
