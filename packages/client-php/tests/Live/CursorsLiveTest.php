<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PlatformApi\Core\Cursor;
use PlatformApi\Exception\ValidationException;
use PlatformApi\PlatformClient;

/**
 * Feed cursors are bound to their organization: the API refuses another organization's cursor,
 * and one whose tag or position was altered, as a 400 naming the parameter. The other
 * organization is the harness's organization B (PLATFORM_LIMITED_TOKEN, a few requests a minute):
 * this file sorts before ErrorsLiveTest, which spends that budget, and the client waits out a 429.
 */
final class CursorsLiveTest extends LiveTestCase
{
    /** The cursor of a change made now in organization A. */
    private static function freshCursor(PlatformClient $client): string
    {
        $course = self::newCourse($client);
        $follower = $client->changes->follow(['after' => 'oldest', 'until_caught_up' => true, 'limit' => 1000]);
        $cursor = null;
        foreach ($follower as $event) {
            $change = $event->toArray();
            if (($change['data']['id'] ?? null) === $course->id) {
                $cursor = $change['cursor'];
            }
        }
        self::assertIsString($cursor, 'the new course has a change with a cursor');
        self::assertMatchesRegularExpression(Cursor::PATTERN, $cursor);
        return $cursor;
    }

    /** @param callable(): mixed $read */
    private static function assertRefusedNaming(string $path, callable $read): void
    {
        try {
            $read();
            self::fail("expected a 400 naming {$path}");
        } catch (ValidationException $e) {
            self::assertSame(400, $e->statusCode);
            self::assertSame('validation_error', $e->errorCode);
            self::assertContains($path, array_map(static fn ($error) => $error->path, $e->errors));
        }
    }

    public function testAnotherOrganizationsCursorIsA400NamingTheParameter(): void
    {
        $cursor = self::freshCursor(self::client());
        // Organization B's token; the default retries wait out its low rate limit if need be.
        $other = self::client(self::env('PLATFORM_LIMITED_TOKEN'));
        self::assertRefusedNaming('query.after', fn () => $other->changes->list(['after' => $cursor]));
        self::assertRefusedNaming(
            'query.until',
            fn () => $other->changes->list(['after' => '0', 'until' => $cursor]),
        );
    }

    public function testAnAlteredCursorIsA400NamingTheParameter(): void
    {
        $client = self::client();
        $cursor = self::freshCursor($client);
        [$position, $tag] = explode('.', $cursor);
        $otherTag = "{$position}." . substr($tag, 0, 9) . ($tag[9] === 'A' ? 'B' : 'A');
        $otherPosition = ((int) $position - 1) . ".{$tag}";
        self::assertMatchesRegularExpression(Cursor::PATTERN, $otherTag);
        self::assertMatchesRegularExpression(Cursor::PATTERN, $otherPosition);
        // The cursor itself is good.
        self::assertSame([], $client->changes->list(['after' => $cursor, 'type' => 'course.created'])->data);
        foreach ([$otherTag, $otherPosition] as $altered) {
            self::assertRefusedNaming('query.after', fn () => $client->changes->list(['after' => $altered]));
            self::assertRefusedNaming(
                'query.until',
                fn () => $client->changes->list(['after' => '0', 'until' => $altered]),
            );
            self::assertRefusedNaming(
                'query.after',
                fn () => iterator_to_array($client->changes->follow(['after' => $altered, 'until_caught_up' => true])),
            );
        }
    }
}
