<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PlatformApi\ClientOptions;
use PlatformApi\Exception\ApiConnectionException;
use PlatformApi\Exception\AuthenticationException;
use PlatformApi\Exception\PermissionDeniedException;
use PlatformApi\Exception\RateLimitException;
use PlatformApi\Tests\Support\RecordingTransport;

/** Each error class from the real server (404, 409 and 400 are in StudentsLiveTest). */
final class ErrorsLiveTest extends LiveTestCase
{
    public function testAnUnknownTokenIsAnAuthenticationException(): void
    {
        try {
            self::client('pat_' . str_repeat('x', 32))->students->list();
            self::fail('expected an AuthenticationException');
        } catch (AuthenticationException $e) {
            self::assertSame(401, $e->statusCode);
            self::assertSame('unauthorized', $e->errorCode);
            self::assertStringContainsString('Bearer', (string) $e->header('WWW-Authenticate'));
        }
    }

    public function testAMissingScopeIsAPermissionDeniedException(): void
    {
        $readonly = self::client(self::env('PLATFORM_READONLY_TOKEN'));
        self::assertIsInt($readonly->students->list(['per_page' => 1])->total);
        try {
            self::newStudent($readonly);
            self::fail('expected a PermissionDeniedException');
        } catch (PermissionDeniedException $e) {
            self::assertSame(403, $e->statusCode);
            self::assertSame('insufficient_scope', $e->errorCode);
            self::assertStringContainsString('students:write', $e->detail);
        }
    }

    public function testTheRateLimitIsARateLimitExceptionWithRetryAfter(): void
    {
        $limit = (int) self::env('PLATFORM_LIMITED_RATE_LIMIT');
        $transport = new RecordingTransport();
        $client = self::client(
            self::env('PLATFORM_LIMITED_TOKEN'),
            new ClientOptions(maxRetries: 0),
            transport: $transport,
        );
        $caught = null;
        for ($i = 0; $i <= $limit + 1 && $caught === null; $i++) {
            try {
                $client->token->retrieve();
            } catch (RateLimitException $e) {
                $caught = $e;
            }
        }
        self::assertNotNull($caught, "no 429 after {$limit} requests");
        self::assertSame(429, $caught->statusCode);
        self::assertSame('rate_limited', $caught->errorCode);
        self::assertGreaterThan(0, $caught->retryAfter);
        self::assertLessThanOrEqual(60, $caught->retryAfter);

        // With retries on but a shorter wait allowed than the server asks, it throws at once.
        $sent = count($transport->requests);
        try {
            $client->withOptions(maxRetries: 2, maxRetryAfter: 0.5)->token->retrieve();
            self::fail('expected a RateLimitException');
        } catch (RateLimitException) {
            self::assertCount($sent + 1, $transport->requests);
        }
    }

    public function testAnUnreachableServerIsAnApiConnectionException(): void
    {
        $this->expectException(ApiConnectionException::class);
        (new \PlatformApi\PlatformClient(
            token: 'pat_x',
            baseUrl: 'http://127.0.0.1:' . \PlatformApi\Tests\Support\ScriptedServer::freePort(),
            options: new ClientOptions(maxRetries: 1, initialRetryDelay: 0.01),
        ))->token->retrieve();
    }
}
