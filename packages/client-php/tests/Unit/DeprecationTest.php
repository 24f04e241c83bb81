<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Unit;

use PHPUnit\Framework\TestCase;
use PlatformApi\PlatformClient;
use PlatformApi\Tests\Support\Fixtures;
use PlatformApi\Tests\Support\ScriptedServer;

/**
 * A response with `Deprecation` (RFC 9745) raises one E_USER_DEPRECATED per operation, over a
 * real socket: a scripted `php -S` on 127.0.0.1 answers as the Platform server answers a
 * deprecated operation.
 */
final class DeprecationTest extends TestCase
{
    private const ID_1 = 'stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8';
    private const ID_2 = 'stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S9';

    private ScriptedServer $server;

    protected function setUp(): void
    {
        $this->server = new ScriptedServer();
    }

    protected function tearDown(): void
    {
        $this->server->stop();
    }

    /** @return list<array{int, string}> the deprecation notices raised while $run ran */
    private static function deprecations(\Closure $run): array
    {
        $raised = [];
        set_error_handler(static function (int $level, string $message) use (&$raised): bool {
            $raised[] = [$level, $message];
            return true;
        });
        try {
            $run();
        } finally {
            restore_error_handler();
        }
        return $raised;
    }

    /** @param array<string, string> $headers */
    private function answer(string $id, array $headers): void
    {
        $this->server->script([
            'status' => 200,
            'headers' => ['Content-Type' => 'application/json'] + $headers,
            'body' => json_encode(Fixtures::student($id)),
        ]);
    }

    public function testTwoCallsOfADeprecatedOperationWarnOnceWithDatesAndNote(): void
    {
        $deprecated = [
            'Deprecation' => '@1767225600',
            'Sunset' => 'Fri, 01 Jan 2027 23:59:59 GMT',
            'Link' => '<http://127.0.0.1/docs/deprecations#get-v1-students-id>; rel="deprecation"; type="text/html"',
        ];
        $this->answer(self::ID_1, $deprecated);
        $this->answer(self::ID_2, $deprecated);
        $client = new PlatformClient(token: 'pat_test', baseUrl: $this->server->url);

        $raised = self::deprecations(function () use ($client): void {
            self::assertSame(self::ID_1, $client->students->retrieve(self::ID_1)->id);
            self::assertSame(self::ID_2, $client->students->retrieve(self::ID_2)->id);
        });

        self::assertSame([[
            E_USER_DEPRECATED,
            'Platform API: GET /v1/students/{id} uses a deprecated part of the API (deprecated since 2026-01-01);'
                . ' it may stop working after Fri, 01 Jan 2027 23:59:59 GMT.'
                . ' Migration note: http://127.0.0.1/docs/deprecations#get-v1-students-id',
        ]], $raised);
    }

    public function testNoHeaderNoWarning(): void
    {
        $this->answer(self::ID_1, ['Link' => '</v1/students?page=1>; rel="first"']);
        $client = new PlatformClient(token: 'pat_test', baseUrl: $this->server->url);

        self::assertSame([], self::deprecations(fn () => $client->students->retrieve(self::ID_1)));
    }
}
