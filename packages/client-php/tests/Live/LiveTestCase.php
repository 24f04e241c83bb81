<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PHPUnit\Framework\TestCase;
use PlatformApi\ClientOptions;
use PlatformApi\Core\Transport;
use PlatformApi\Model\Course;
use PlatformApi\Model\Student;
use PlatformApi\OAuth\TokenProvider;
use PlatformApi\PlatformClient;
use PlatformApi\Tests\Support\RecordingTransport;

/**
 * Base of the live suite: a real server on loopback started by `platform-sdk-live`, which puts
 * its URL and fixtures (tokens of two organizations, an OAuth client, refresh tokens) in the
 * environment. Every client here records the operations it called (see OperationCoverageTest).
 */
abstract class LiveTestCase extends TestCase
{
    protected static function env(string $name): string
    {
        $value = getenv($name);
        if (!is_string($value) || $value === '') {
            self::fail("{$name} is not set: run the live suite under platform-sdk-live "
                . '(`pnpm --filter @platform/client-php test`).');
        }
        return $value;
    }

    protected static function client(
        ?string $token = null,
        ?ClientOptions $options = null,
        ?TokenProvider $auth = null,
        ?Transport $transport = null,
    ): PlatformClient {
        return new PlatformClient(
            token: $auth === null ? ($token ?? self::env('PLATFORM_TOKEN')) : null,
            baseUrl: self::env('PLATFORM_BASE_URL'),
            auth: $auth,
            options: $options,
            transport: $transport ?? new RecordingTransport(),
        );
    }

    /** A value no other test (or run against the same database) uses. */
    protected static function unique(string $prefix): string
    {
        return $prefix . bin2hex(random_bytes(5));
    }

    /** @param array<string, mixed> $params */
    protected static function newStudent(?PlatformClient $client = null, array $params = []): Student
    {
        return ($client ?? self::client())->students->create($params + [
            'student_number' => self::unique('S-'),
            'first_name' => 'Ada',
            'last_name' => 'Lovelace',
        ]);
    }

    protected static function newCourse(?PlatformClient $client = null): Course
    {
        return ($client ?? self::client())->courses->create([
            'code' => self::unique('C-'),
            'title' => 'Analytical Engines',
            'capacity' => 30,
        ]);
    }
}
