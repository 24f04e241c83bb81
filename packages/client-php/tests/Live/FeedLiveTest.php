<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PlatformApi\Core\Cursor;
use PlatformApi\PlatformClient;

/**
 * `$client->changes->follow()` against the real server: every change after the cursor once, in
 * feed order, resuming from the saved cursor, which is the last change's own `cursor`.
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

    /** The position a cursor names: the number before the dot. */
    private static function positionOf(string $cursor): int
    {
        self::assertMatchesRegularExpression(Cursor::PATTERN, $cursor);
        return (int) explode('.', $cursor)[0];
    }

    public function testFollowReadsInOrderAndResumesFromTheCursor(): void
    {
        $client = self::client();
        $start = self::head($client);
        $at = self::positionOf($start);
        for ($i = 0; $i < 5; $i++) {
            self::newCourse($client);
        }
        $gone = self::newCourse($client);
        $client->courses->delete($gone->id);

        $seen = [];
        $cursors = [];
        $first = $client->changes->follow(['after' => $start, 'limit' => 2, 'until_caught_up' => true]);
        foreach ($first as $event) {
            $change = $event->toArray();
            $seen[] = [$change['position'], $event->eventType()];
            $cursors[] = $change['cursor'];
            // The follower's cursor after a change is that change's cursor (here mid-page too).
            self::assertSame($change['cursor'], $first->cursor);
            if (count($seen) === 3) {
                break;
            }
        }
        self::assertSame($at + 3, self::positionOf($first->cursor));
        $rest = $client->changes->follow(['after' => $first->cursor, 'limit' => 2, 'until_caught_up' => true]);
        foreach ($rest as $event) {
            $change = $event->toArray();
            $seen[] = [$change['position'], $event->eventType()];
            $cursors[] = $change['cursor'];
            self::assertSame($change['cursor'], $rest->cursor);
        }
        $expected = [];
        for ($n = 1; $n <= 6; $n++) {
            $expected[] = [$at + $n, 'course.created'];
        }
        $expected[] = [$at + 7, 'course.deleted'];
        // Resumed from the saved cursor: nothing skipped, nothing repeated.
        self::assertSame($expected, $seen);
        // Each change's cursor names its own position, and no two are alike.
        self::assertSame(array_column($expected, 0), array_map(self::positionOf(...), $cursors));
        self::assertCount(7, array_unique($cursors));
        self::assertSame($cursors[6], $rest->cursor);
        self::assertSame($cursors[6], self::head($client));
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

    public function testAPositionIsRefusedBeforeAnyRequestSayingToPassACursor(): void
    {
        $client = self::client();
        $head = self::head($client);
        foreach ([self::positionOf($head), (string) self::positionOf($head)] as $position) {
            try {
                $client->changes->follow(['after' => $position, 'until_caught_up' => true]);
                self::fail('expected an InvalidArgumentException');
            } catch (\PlatformApi\Exception\InvalidArgumentException $e) {
                self::assertStringStartsWith('after must be a cursor, not a position', $e->getMessage());
                self::assertStringContainsString('opaque', $e->getMessage());
            }
        }
    }
}
