<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Unit;

use PHPUnit\Framework\TestCase;
use PlatformApi\ClientOptions;
use PlatformApi\Core\Retry;
use PlatformApi\Exception\ApiConnectionException;
use PlatformApi\Exception\ApiStatusException;
use PlatformApi\Exception\ApiTimeoutException;
use PlatformApi\Exception\AuthenticationException;
use PlatformApi\Exception\ConflictException;
use PlatformApi\Exception\NotFoundException;
use PlatformApi\Exception\PermissionDeniedException;
use PlatformApi\Exception\RateLimitException;
use PlatformApi\Exception\ServerException;
use PlatformApi\Exception\ValidationException;
use PlatformApi\PlatformClient;
use PlatformApi\RequestOptions;
use PlatformApi\Tests\Support\ClientFactory;
use PlatformApi\Tests\Support\FakeTransport;
use PlatformApi\Tests\Support\Fixtures;

/** The retry matrix: what is repeated, how long the client waits, and what is thrown in the end. */
final class RetryTest extends TestCase
{
    use ClientFactory;

    public function testA429IsRetriedAfterRetryAfterSeconds(): void
    {
        $this->script(
            FakeTransport::problem(429, 'rate_limited', headers: ['Retry-After' => '2']),
            FakeTransport::json(200, Fixtures::student()),
        );
        $student = $this->client()->students->retrieve('stu_01');
        self::assertSame('stu_01', $student->id);
        self::assertSame([2.0], $this->sleeps);
        self::assertCount(2, $this->transport->requests);
    }

    public function testA429RetryAfterAsAnHttpDateIsWaitedForUntilThatDate(): void
    {
        $date = gmdate('D, d M Y H:i:s \G\M\T', time() + 5);
        $this->script(
            FakeTransport::problem(429, 'rate_limited', headers: ['Retry-After' => $date]),
            FakeTransport::json(200, Fixtures::student()),
        );
        $this->client()->students->retrieve('stu_01');
        self::assertCount(1, $this->sleeps);
        // Whole seconds in the header, so up to 1 s less than 5 has passed by now.
        self::assertGreaterThan(3.5, $this->sleeps[0]);
        self::assertLessThanOrEqual(5.0, $this->sleeps[0]);
    }

    public function testARetryAfterLongerThanTheMaximumThrowsAtOnce(): void
    {
        $this->script(FakeTransport::problem(429, 'rate_limited', headers: ['Retry-After' => '120']));
        try {
            $this->client()->students->retrieve('stu_01');
            self::fail('expected a RateLimitException');
        } catch (RateLimitException $e) {
            self::assertSame(120, $e->retryAfter);
            self::assertSame('rate_limited', $e->errorCode);
        }
        self::assertSame([], $this->sleeps);
        self::assertCount(1, $this->transport->requests);
    }

    public function testA429OnAPostIsRetriedWithTheSameIdempotencyKey(): void
    {
        $this->script(
            FakeTransport::problem(429, 'rate_limited', headers: ['Retry-After' => '1']),
            FakeTransport::problem(429, 'rate_limited', headers: ['Retry-After' => '1']),
            FakeTransport::json(201, Fixtures::student()),
        );
        $this->client()->students->create(['student_number' => 'S-1', 'first_name' => 'A', 'last_name' => 'B']);
        $keys = array_map(static fn ($r) => $r->headers['idempotency-key'], $this->transport->requests);
        self::assertCount(3, $keys);
        self::assertCount(1, array_unique($keys));
        self::assertMatchesRegularExpression(
            '/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/',
            $keys[0],
        );
        self::assertSame([$keys[0]], array_values(array_unique($keys)));
    }

    public function testA503OnAGetIsRetriedWithExponentialBackoff(): void
    {
        $this->script(
            FakeTransport::problem(503, 'service_unavailable'),
            FakeTransport::problem(503, 'service_unavailable'),
            FakeTransport::json(200, Fixtures::student()),
        );
        $this->client()->students->retrieve('stu_01');
        self::assertCount(2, $this->sleeps);
        // 0.5 s then 1 s, each minus up to 25 % jitter.
        self::assertGreaterThanOrEqual(0.375, $this->sleeps[0]);
        self::assertLessThanOrEqual(0.5, $this->sleeps[0]);
        self::assertGreaterThanOrEqual(0.75, $this->sleeps[1]);
        self::assertLessThanOrEqual(1.0, $this->sleeps[1]);
    }

    public function testRetriesStopAfterMaxRetriesAndTheLastErrorIsThrown(): void
    {
        $this->script(
            FakeTransport::problem(503, 'service_unavailable', 'first'),
            FakeTransport::problem(503, 'service_unavailable', 'second'),
            FakeTransport::problem(502, 'internal_error', 'third'),
        );
        try {
            $this->client()->students->retrieve('stu_01');
            self::fail('expected a ServerException');
        } catch (ServerException $e) {
            self::assertSame(502, $e->statusCode);
            self::assertSame('third', $e->detail);
        }
        self::assertCount(3, $this->transport->requests);
        self::assertSame(0, $this->transport->remaining());
    }

    public function testAConnectionResetIsRetriedForAGet(): void
    {
        $this->script(
            new ApiConnectionException('Connection reset by peer', 'GET', 'https://api.school.test/v1/students/stu_01'),
            FakeTransport::json(200, Fixtures::student()),
        );
        self::assertSame('stu_01', $this->client()->students->retrieve('stu_01')->id);
        self::assertCount(1, $this->sleeps);
    }

    public function testTimeoutsAreRetriedThenThrownAsApiTimeoutException(): void
    {
        $timeout = new ApiTimeoutException('No complete response in time', 'GET', 'u');
        $this->script($timeout, $timeout, $timeout);
        $this->expectException(ApiTimeoutException::class);
        try {
            $this->client()->students->retrieve('stu_01');
        } finally {
            self::assertCount(3, $this->transport->requests);
        }
    }

    public function testAConnectionErrorOnAPostIsRetriedBecauseItCarriesAKey(): void
    {
        $this->script(
            new ApiConnectionException('reset', 'POST', 'u'),
            FakeTransport::json(201, Fixtures::student()),
        );
        $this->client()->students->create(['student_number' => 'S-1', 'first_name' => 'A', 'last_name' => 'B']);
        [$first, $second] = $this->transport->requests;
        self::assertSame($first->headers['idempotency-key'], $second->headers['idempotency-key']);
        self::assertSame($first->body, $second->body);
    }

    public function testAPatchWithoutAKeyIsNotRetriedOnA503ButOneWithAKeyIs(): void
    {
        $this->script(FakeTransport::problem(503, 'service_unavailable'));
        try {
            $this->client()->students->update('stu_01', ['first_name' => 'B']);
            self::fail('expected a ServerException');
        } catch (ServerException) {
            self::assertCount(1, $this->transport->requests);
        }

        $this->script(
            FakeTransport::problem(503, 'service_unavailable'),
            FakeTransport::json(200, Fixtures::student()),
        );
        $this->client()->students->update(
            'stu_01',
            ['first_name' => 'B'],
            new RequestOptions(idempotencyKey: 'patch-1'),
        );
        self::assertCount(2, $this->transport->requests);
        self::assertSame('patch-1', $this->transport->requests[1]->headers['idempotency-key']);
    }

    /** @return iterable<string, array{int, string, class-string<ApiStatusException>}> */
    public static function notRetried(): iterable
    {
        yield '400' => [400, 'validation_error', ValidationException::class];
        yield '401' => [401, 'unauthorized', AuthenticationException::class];
        yield '403' => [403, 'insufficient_scope', PermissionDeniedException::class];
        yield '404' => [404, 'not_found', NotFoundException::class];
        yield '409 without Retry-After' => [409, 'conflict', ConflictException::class];
        yield '422' => [422, 'unprocessable', ApiStatusException::class];
        yield '501' => [501, 'not_implemented', ServerException::class];
    }

    /**
     * @dataProvider notRetried
     * @param class-string<ApiStatusException> $class
     */
    public function testAnswersThatCannotSucceedOnARepeatAreNotRetried(int $status, string $code, string $class): void
    {
        $this->script(FakeTransport::problem($status, $code));
        try {
            $this->client()->students->retrieve('stu_01');
            self::fail("expected {$class}");
        } catch (ApiStatusException $e) {
            self::assertSame($class, get_class($e));
        }
        self::assertCount(1, $this->transport->requests);
        self::assertSame([], $this->sleeps);
    }

    public function testA409WithRetryAfterOnAKeyedPostIsRetried(): void
    {
        // An attempt with the same key is still running on the server: wait, and get its answer.
        $this->script(
            FakeTransport::problem(409, 'conflict', headers: ['Retry-After' => '1']),
            FakeTransport::json(201, Fixtures::student()),
        );
        $this->client()->students->create(['student_number' => 'S-1', 'first_name' => 'A', 'last_name' => 'B']);
        self::assertSame([1.0], $this->sleeps);
    }

    public function testMaxRetriesZeroSendsOnce(): void
    {
        $this->script(FakeTransport::problem(503, 'service_unavailable'));
        $this->expectException(ServerException::class);
        $this->client(new ClientOptions(maxRetries: 0))->students->retrieve('stu_01');
    }

    public function testPerRequestMaxRetriesWinsOverTheClients(): void
    {
        $this->script(
            FakeTransport::problem(503, 'service_unavailable'),
            FakeTransport::json(200, Fixtures::student()),
        );
        try {
            $this->client()->students->retrieve('stu_01', new RequestOptions(maxRetries: 0));
            self::fail('expected a ServerException');
        } catch (ServerException) {
            self::assertCount(1, $this->transport->requests);
        }
    }

    public function testWithOptionsMaxRetriesZeroLeavesTheOriginalClientAlone(): void
    {
        $this->script(FakeTransport::problem(503, 'service_unavailable'));
        $client = $this->client();
        try {
            $client->withOptions(maxRetries: 0)->students->retrieve('stu_01');
            self::fail('expected a ServerException');
        } catch (ServerException) {
            self::assertCount(1, $this->transport->requests);
        }
        self::assertSame(2, $client->options->maxRetries);
    }

    public function testXShouldRetryFalseStopsARetry(): void
    {
        $this->script(FakeTransport::problem(503, 'service_unavailable', headers: ['X-Should-Retry' => 'false']));
        $this->expectException(ServerException::class);
        try {
            $this->client()->students->retrieve('stu_01');
        } finally {
            self::assertCount(1, $this->transport->requests);
        }
    }

    public function testBackoffDoublesIsCappedAndKeepsFractions(): void
    {
        self::assertSame(0.5, Retry::backoff(0, 0.5, 8.0, 0.0));
        self::assertSame(1.0, Retry::backoff(1, 0.5, 8.0, 0.0));
        self::assertSame(2.0, Retry::backoff(2, 0.5, 8.0, 0.0));
        self::assertSame(8.0, Retry::backoff(4, 0.5, 8.0, 0.0));
        self::assertSame(8.0, Retry::backoff(30, 0.5, 8.0, 0.0));
        // Jitter takes off at most 25 %.
        self::assertSame(0.375, Retry::backoff(0, 0.5, 8.0, 1.0));
        self::assertEqualsWithDelta(0.3 * 0.9, Retry::backoff(0, 0.3, 8.0, 0.4), 1e-12);
        for ($i = 0; $i < 200; $i++) {
            $d = Retry::backoff(1, 0.5, 8.0);
            self::assertGreaterThanOrEqual(0.75, $d);
            self::assertLessThanOrEqual(1.0, $d);
        }
    }

    public function testTheDefaultSleepWaitsFractionsOfASecond(): void
    {
        // The Stainless PHP core cast before multiplying, so 0.4 s became 0 s (sdks.md pitfall 7).
        $transport = new FakeTransport(
            FakeTransport::problem(503, 'service_unavailable'),
            FakeTransport::json(200, Fixtures::student()),
        );
        $client = new PlatformClient(
            token: 'pat_test',
            baseUrl: 'https://api.school.test',
            options: new ClientOptions(initialRetryDelay: 0.2, maxRetryDelay: 0.2),
            transport: $transport,
        );
        $start = microtime(true);
        $client->students->retrieve('stu_01');
        self::assertGreaterThanOrEqual(0.15, microtime(true) - $start);
    }

    public function testRetryAfterParsing(): void
    {
        $now = 1_700_000_000.0;
        self::assertSame(5.0, Retry::parseRetryAfter('5', $now));
        self::assertSame(7.0, Retry::parseRetryAfter(' 7 ', $now));
        self::assertSame(0.0, Retry::parseRetryAfter('0', $now));
        self::assertSame(30.0, Retry::parseRetryAfter(gmdate('D, d M Y H:i:s \G\M\T', (int) $now + 30), $now));
        self::assertSame(30.0, Retry::parseRetryAfter(gmdate('l, d-M-y H:i:s \G\M\T', (int) $now + 30), $now));
        self::assertSame(30.0, Retry::parseRetryAfter(gmdate('D M j H:i:s Y', (int) $now + 30), $now));
        // A date in the past means now, never a negative wait (the Stainless core inverted the sign).
        self::assertSame(0.0, Retry::parseRetryAfter(gmdate('D, d M Y H:i:s \G\M\T', (int) $now - 30), $now));
        self::assertNull(Retry::parseRetryAfter(null, $now));
        self::assertNull(Retry::parseRetryAfter('soon', $now));
        self::assertNull(Retry::parseRetryAfter('-3', $now));
        self::assertNull(Retry::parseRetryAfter('1.5', $now));
    }
}
