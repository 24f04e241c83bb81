<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Unit;

use PHPUnit\Framework\TestCase;
use PlatformApi\Core\Cursor;
use PlatformApi\Core\FeedFollower;
use PlatformApi\Exception\ApiConnectionException;
use PlatformApi\Exception\ApiStatusException;
use PlatformApi\Exception\CursorExpiredException;
use PlatformApi\Exception\InvalidArgumentException;
use PlatformApi\Exception\NotFoundException;
use PlatformApi\Exception\ServerException;
use PlatformApi\Exception\ValidationException;
use PlatformApi\PlatformClient;
use PlatformApi\Tests\Support\ScriptedServer;

/**
 * `$client->changes->follow()` and the feed's cursor against a scripted server on 127.0.0.1: what
 * is retried and how long it waits, what ends the loop, which cursors are accepted.
 */
final class FollowTest extends TestCase
{
    private static ScriptedServer $server;
    private int $seen = 0;

    public static function setUpBeforeClass(): void
    {
        self::$server = new ScriptedServer();
    }

    public static function tearDownAfterClass(): void
    {
        self::$server->stop();
    }

    protected function setUp(): void
    {
        $this->seen = count(self::$server->requests());
    }

    /** @return list<string> the URIs asked for since the test started */
    private function uris(): array
    {
        return array_column(array_slice(self::$server->requests(), $this->seen), 'uri');
    }

    private function client(?string $baseUrl = null): PlatformClient
    {
        return new PlatformClient(token: 'pat_follow', baseUrl: $baseUrl ?? self::$server->url);
    }

    /**
     * The cursor the scripted feed hands out for a position: `<position>.<tag>` as the API shapes it,
     * with a tag that differs from position to position, so nothing can make it from a position.
     */
    private static function cursor(int $position): string
    {
        $tag = rtrim(strtr(base64_encode(hash('sha256', "org_test\0{$position}", true)), '+/', '-_'), '=');
        return "{$position}." . substr($tag, 0, 10);
    }

    /**
     * A step answering one page of changes at these positions, each with its `cursor`, and the
     * page's `next_cursor` at position `$next`.
     *
     * @param list<int> $positions
     * @return array<string, mixed>
     */
    private static function changes(array $positions, int $next, bool $hasMore = false): array
    {
        $data = array_map(static fn (int $p): array => [
            'id' => "evt_{$p}",
            'position' => $p,
            'cursor' => self::cursor($p),
            'type' => 'test.changed',
            'data' => ['n' => $p],
        ], $positions);
        return [
            'status' => 200,
            'headers' => ['Content-Type' => 'application/json'],
            'body' => json_encode(['data' => $data, 'next_cursor' => self::cursor($next), 'has_more' => $hasMore]),
        ];
    }

    /** @return array<string, mixed> */
    private static function problem(int $status, string $code, array $headers = []): array
    {
        return [
            'status' => $status,
            'headers' => ['Content-Type' => 'application/problem+json'] + $headers,
            'body' => json_encode(['type' => 'about:blank', 'title' => 'T', 'status' => $status, 'code' => $code,
                'detail' => "It went {$code}."]),
        ];
    }

    /** @return list<string> */
    private static function ids(iterable $follower): array
    {
        $ids = [];
        foreach ($follower as $event) {
            $ids[] = (string) $event->toArray()['id'];
        }
        return $ids;
    }

    public function testRetryableFailuresAreRetriedWithBackoffAndNothingIsLostOrRepeated(): void
    {
        self::$server->script(
            self::changes([11, 12], 12, true),
            self::problem(503, 'unavailable'),
            ['status' => 502, 'headers' => ['Content-Type' => 'text/html'], 'body' => '<h1>Bad gateway</h1>'],
            self::problem(429, 'rate_limited'),
            self::problem(500, 'internal_error'),
            self::changes([13], 13),
            self::changes([], 13),
        );
        $retries = [];
        $follower = $this->client()->changes->follow(
            ['after' => self::cursor(10), 'until_caught_up' => true],
            maxRetryDelay: 0.05,
            onRetry: function (\Throwable $e, int $attempt, float $delay) use (&$retries): void {
                $retries[] = [get_class($e), $attempt, $delay];
            },
        );
        self::assertSame(['evt_11', 'evt_12', 'evt_13'], self::ids($follower));
        self::assertSame(self::cursor(13), $follower->cursor);
        self::assertSame(
            [ServerException::class, ServerException::class, \PlatformApi\Exception\RateLimitException::class,
                ServerException::class],
            array_column($retries, 0),
        );
        self::assertSame([1, 2, 3, 4], array_column($retries, 1));
        foreach ($retries as [, $attempt, $delay]) {
            // min(0.05, 0.5 × 2^n), randomized in [half, all] of it.
            self::assertGreaterThanOrEqual(0.025, $delay);
            self::assertLessThanOrEqual(0.05, $delay);
        }
        // Every read after the failures asks again from the same place: nothing skipped.
        self::assertSame(
            array_merge(
                ['/v1/changes?after=' . self::cursor(10) . '&wait=0s'],
                array_fill(0, 5, '/v1/changes?after=' . self::cursor(12) . '&wait=0s'),
                ['/v1/changes?after=' . self::cursor(13) . '&wait=0s']
            ),
            $this->uris(),
        );
    }

    public function testRetryAfterIsObeyedInsteadOfTheBackoff(): void
    {
        self::$server->script(self::problem(503, 'unavailable', ['Retry-After' => '1']), self::changes([], 5));
        $delays = [];
        $started = microtime(true);
        $follower = $this->client()->changes->follow(
            ['after' => self::cursor(5), 'until_caught_up' => true],
            maxRetryDelay: 0.01,
            onRetry: function (\Throwable $e, int $attempt, float $delay) use (&$delays): void {
                $delays[] = $delay;
            },
        );
        self::assertSame([], self::ids($follower));
        self::assertSame([1.0], $delays);
        self::assertGreaterThanOrEqual(1.0, microtime(true) - $started);
    }

    public function testTheDelayMathsCapsTheBackoffAndRetryAfter(): void
    {
        $error = new ServerException(503, [], '');
        self::assertSame(0.25, FeedFollower::retryDelay($error, 0, 10.0, 0.0));
        self::assertSame(0.5, FeedFollower::retryDelay($error, 0, 10.0, 1.0));
        self::assertSame(4.0, FeedFollower::retryDelay($error, 3, 10.0, 1.0));
        self::assertSame(10.0, FeedFollower::retryDelay($error, 40, 10.0, 1.0));
        self::assertSame(5.0, FeedFollower::retryDelay($error, 40, 10.0, 0.0));
        $later = new ServerException(503, ['retry-after' => ['3600']], '');
        self::assertSame(60.0, FeedFollower::retryDelay($later, 0, 10.0, 0.5));
        self::assertTrue(FeedFollower::isRetryable(new ApiConnectionException('down')));
        self::assertFalse(FeedFollower::isRetryable(new ApiStatusException(409, [], '')));
    }

    public function testAConnectionFailureIsRetriedUntilGiveUpAfterThenThrown(): void
    {
        $attempts = 0;
        $follower = $this->client('http://127.0.0.1:' . ScriptedServer::freePort())->changes->follow(
            ['after' => 'oldest'],
            maxRetryDelay: 0.05,
            giveUpAfter: 0.3,
            onRetry: function () use (&$attempts): void {
                $attempts++;
            },
        );
        $started = microtime(true);
        try {
            self::ids($follower);
            self::fail('expected the connection error once giveUpAfter had passed');
        } catch (ApiConnectionException $e) {
            self::assertGreaterThanOrEqual(2, $attempts);
            self::assertGreaterThanOrEqual(0.3, microtime(true) - $started);
            self::assertLessThan(10.0, microtime(true) - $started);
        }
    }

    public function testAnErrorRetryingCannotFixEndsTheLoopAtOnce(): void
    {
        self::$server->script(self::problem(404, 'not_found'));
        $called = false;
        $follower = $this->client()->changes->follow(['after' => 0], onRetry: function () use (&$called): void {
            $called = true;
        });
        $this->expectException(NotFoundException::class);
        try {
            self::ids($follower);
        } finally {
            self::assertFalse($called);
            self::assertCount(1, $this->uris());
        }
    }

    public function testAnExpiredCursorIsItsOwnExceptionOnFollowAndOnAPlainRead(): void
    {
        self::$server->script(self::problem(410, 'cursor_expired'), self::problem(410, 'cursor_expired'));
        try {
            self::ids($this->client()->changes->follow(['after' => self::cursor(1)]));
            self::fail('expected CursorExpiredException');
        } catch (CursorExpiredException $e) {
            self::assertSame(410, $e->statusCode);
            self::assertSame('cursor_expired', $e->errorCode);
            self::assertStringContainsString(
                'start again from an export (POST /v1/exports) and follow from its cursor',
                $e->getMessage(),
            );
        }
        $this->expectException(CursorExpiredException::class);
        $this->client()->changes->list(['after' => self::cursor(1)]);
    }

    public function testAnother410StaysThePlainStatusException(): void
    {
        self::$server->script(self::problem(410, 'gone'));
        try {
            $this->client()->changes->list(['after' => self::cursor(1)]);
            self::fail('expected a 410');
        } catch (ApiStatusException $e) {
            self::assertSame(ApiStatusException::class, get_class($e));
        }
    }

    public function testTheDeprecatedEventsChangesAndFollowReadTheSameFeedAsChanges(): void
    {
        self::$server->script(
            self::changes([3, 4], 4),
            self::changes([3, 4], 4),
            self::changes([3, 4], 4),
            self::changes([], 4),
        );
        $page = $this->client()->changes->list(['after' => self::cursor(2)]);
        $old = $this->client()->events->changes(['after' => self::cursor(2)]);
        self::assertSame(['evt_3', 'evt_4'], self::ids($page->data));
        self::assertSame(self::ids($page->data), self::ids($old->data));
        $follower = $this->client()->events->follow(['after' => self::cursor(2), 'until_caught_up' => true]);
        self::assertSame(['evt_3', 'evt_4'], self::ids($follower));
        self::assertSame(self::cursor(4), $follower->cursor);
        self::assertSame(
            [
                '/v1/changes?after=' . self::cursor(2),
                '/v1/changes?after=' . self::cursor(2),
                '/v1/changes?after=' . self::cursor(2) . '&wait=0s',
                '/v1/changes?after=' . self::cursor(4) . '&wait=0s',
            ],
            $this->uris(),
        );
    }

    public function testCursorsAreSentAsTheFeedGaveThem(): void
    {
        self::$server->script(
            self::changes([], 7),
            self::changes([], 8),
            self::changes([], 9),
            self::changes([], 9),
            self::changes([], 9),
            self::changes([], 10),
        );
        $this->client()->changes->list(['after' => self::cursor(7)]);
        $this->client()->changes->list(['after' => '999999999999999999.AbC-_9zZ0q']);
        $this->client()->changes->list(['after' => '0.Xk3aB9_-q1']);
        $this->client()->changes->list(['after' => '0']);
        $this->client()->changes->list(['after' => 0]);
        $follower = $this->client()->changes->follow(['after' => 'oldest', 'until_caught_up' => true]);
        self::ids($follower);
        self::assertSame(self::cursor(10), $follower->cursor);
        self::assertSame(
            [
                '/v1/changes?after=' . self::cursor(7),
                '/v1/changes?after=999999999999999999.AbC-_9zZ0q',
                '/v1/changes?after=0.Xk3aB9_-q1',
                '/v1/changes?after=0',
                '/v1/changes?after=0',
                '/v1/changes?after=oldest&wait=0s',
            ],
            $this->uris(),
        );
    }

    /** @return iterable<string, array{string}> */
    public static function cursors(): iterable
    {
        yield 'a cursor' => ['42.Xk3aB9_-q1'];
        yield 'the largest position' => ['999999999999999999.AAAAAAAAAA'];
        yield 'position 0 with its tag' => ['0.__________'];
        yield 'the start' => ['0'];
        yield 'the oldest kept' => ['oldest'];
    }

    /** @dataProvider cursors */
    public function testCursorAcceptsWhatTheFeedHandsOut(string $cursor): void
    {
        self::assertSame($cursor, Cursor::check($cursor));
        self::assertSame($cursor, Cursor::check($cursor, 'until'));
        self::assertSame(
            ['after' => $cursor, 'until' => $cursor],
            Cursor::inQuery(['after' => $cursor, 'until' => $cursor]),
        );
        self::assertSame('0', Cursor::check(0));
    }

    /** @return iterable<string, array{int|string}> */
    public static function positions(): iterable
    {
        yield 'an int position' => [42];
        yield 'position 1' => [1];
        yield 'a position as a string' => ['42'];
        yield 'the largest position as a string' => ['999999999999999999'];
    }

    /** @dataProvider positions */
    public function testAPositionIsRefusedSayingCursorsAreOpaque(int|string $position): void
    {
        foreach (
            [
                ['after', fn () => $this->client()->changes->follow(['after' => $position])],
                ['until', fn () => $this->client()->changes->follow(['after' => '0', 'until' => $position])],
                ['after', fn () => $this->client()->changes->list(['after' => $position])],
                ['until', fn () => $this->client()->changes->list(['after' => '0', 'until' => $position])],
                ['after', fn () => $this->client()->events->raw->changes(['after' => $position])],
            ] as [$name, $call]
        ) {
            try {
                $call();
                self::fail("expected InvalidArgumentException naming {$name}");
            } catch (InvalidArgumentException $e) {
                self::assertStringStartsWith("{$name} must be a cursor, not a position", $e->getMessage());
                self::assertStringContainsString('opaque strings', $e->getMessage());
                self::assertStringContainsString(
                    "Pass a next_cursor, an export's cursor or an event's cursor, not its position",
                    $e->getMessage(),
                );
                self::assertStringContainsString((string) $position, $e->getMessage());
            }
        }
        self::assertSame([], $this->uris());
    }

    /** @return iterable<string, array{mixed}> */
    public static function notCursors(): iterable
    {
        yield 'negative' => [-1];
        yield 'float' => [1.5];
        yield 'bool' => [true];
        yield 'null' => [null];
        yield 'other string' => ['newest'];
        yield 'signed string' => ['-3'];
        yield 'empty string' => [''];
        yield 'leading zero' => ['007'];
        yield 'more digits than a position has' => ['1000000000000000000'];
        yield 'a tag too short' => ['42.Xk3aB9_-q'];
        yield 'a tag too long' => ['42.Xk3aB9_-q1x'];
        yield 'a tag not base64url' => ['42.Xk3aB9+/q1'];
        yield 'no position' => ['.Xk3aB9_-q1'];
        yield 'no tag' => ['42.'];
        yield 'a position with a leading zero' => ['042.Xk3aB9_-q1'];
        yield 'a position of 19 digits' => ['1000000000000000000.Xk3aB9_-q1'];
        yield 'a negative position' => ['-42.Xk3aB9_-q1'];
        yield 'two tags' => ['42.Xk3aB9_-q1.Xk3aB9_-q1'];
        yield 'a trailing newline' => ["42.Xk3aB9_-q1\n"];
        yield 'a leading space' => [' 42.Xk3aB9_-q1'];
        yield 'an array' => [['42.Xk3aB9_-q1']];
    }

    /** @dataProvider notCursors */
    public function testAnythingElseIsRefusedBeforeARequestNamingTheParameter(mixed $cursor): void
    {
        foreach (
            [
                fn () => $this->client()->changes->follow(['after' => $cursor]),
                fn () => $this->client()->changes->list(['after' => $cursor]),
                fn () => $this->client()->events->raw->changes(['after' => $cursor]),
            ] as $call
        ) {
            try {
                $call();
                self::fail('expected InvalidArgumentException');
            } catch (InvalidArgumentException $e) {
                self::assertStringStartsWith('after must be a cursor: ', $e->getMessage());
                self::assertStringContainsString("an event's cursor", $e->getMessage());
                self::assertStringContainsString("'oldest'", $e->getMessage());
            }
        }
        try {
            $this->client()->changes->list(['after' => '0', 'until' => $cursor]);
            self::fail('expected InvalidArgumentException');
        } catch (InvalidArgumentException $e) {
            self::assertStringStartsWith('until must be a cursor: ', $e->getMessage());
        }
        self::assertSame([], $this->uris());
    }

    public function testFollowWithoutAfterSaysToPassACursor(): void
    {
        try {
            $this->client()->changes->follow(['until_caught_up' => true]);
            self::fail('expected InvalidArgumentException');
        } catch (InvalidArgumentException $e) {
            self::assertStringContainsString("an export's cursor", $e->getMessage());
            self::assertStringContainsString("'oldest'", $e->getMessage());
        }
        self::assertSame([], $this->uris());
    }

    public function testA400EndsTheLoopAsAValidationError(): void
    {
        self::$server->script(self::problem(400, 'validation_error'));
        $this->expectException(ValidationException::class);
        self::ids($this->client()->changes->follow(['after' => self::cursor(3)]));
    }

    public function testFollowUntilACursorEndsThereWithoutReadingOn(): void
    {
        self::$server->script(
            self::changes([4, 5], 5, true),
            self::changes([6], 6),
            self::changes([], 6),
        );
        $until = self::cursor(6);
        $follower = $this->client()->changes->follow(['after' => self::cursor(3), 'until' => $until, 'limit' => 2]);
        self::assertSame(['evt_4', 'evt_5', 'evt_6'], self::ids($follower));
        self::assertSame($until, $follower->cursor);
        // One read finds the end at until; the loop ends rather than read at until again.
        self::assertSame(
            [
                '/v1/changes?after=' . self::cursor(3) . "&until={$until}&limit=2&wait=30s",
                '/v1/changes?after=' . self::cursor(5) . "&until={$until}&limit=2&wait=30s",
                "/v1/changes?after={$until}&until={$until}&limit=2&wait=30s",
            ],
            $this->uris(),
        );
    }

    public function testAfterEachChangeTheCursorIsThatChangesCursorAndResumingThereSkipsAndRepeatsNothing(): void
    {
        // The page's end (8) lies past its last change (6): changes of types this token does not read.
        self::$server->script(self::changes([4, 5, 6], 8), self::changes([5, 6], 8), self::changes([], 8));
        $follower = $this->client()->changes->follow(['after' => self::cursor(3), 'until_caught_up' => true]);
        $cursors = [];
        foreach ($follower as $event) {
            $cursors[] = $follower->cursor;
            // Applied evt_4, saved the cursor, stopped: the event's own cursor, not its position.
            self::assertSame($event->toArray()['cursor'], $follower->cursor);
            break;
        }
        self::assertSame([self::cursor(4)], $cursors);

        $resumed = $this->client()->changes->follow(['after' => $follower->cursor, 'until_caught_up' => true]);
        $cursors = [];
        $ids = [];
        foreach ($resumed as $event) {
            $ids[] = $event->toArray()['id'];
            $cursors[] = $resumed->cursor;
        }
        self::assertSame(['evt_5', 'evt_6'], $ids);
        // After the page's last change, its next_cursor: nothing before it is read again.
        self::assertSame([self::cursor(5), self::cursor(8)], $cursors);
        self::assertSame(
            [
                '/v1/changes?after=' . self::cursor(3) . '&wait=0s',
                '/v1/changes?after=' . self::cursor(4) . '&wait=0s',
                '/v1/changes?after=' . self::cursor(8) . '&wait=0s',
            ],
            $this->uris(),
        );
    }
}
