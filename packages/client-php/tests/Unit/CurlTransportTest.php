<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Unit;

use PHPUnit\Framework\TestCase;
use PlatformApi\ClientOptions;
use PlatformApi\Core\CurlTransport;
use PlatformApi\Core\Request;
use PlatformApi\Exception\ApiConnectionException;
use PlatformApi\Exception\ApiTimeoutException;
use PlatformApi\Exception\ConflictException;
use PlatformApi\Exception\ServerException;
use PlatformApi\Export\Exports;
use PlatformApi\PlatformClient;
use PlatformApi\RequestOptions;
use PlatformApi\Tests\Support\Fixtures;
use PlatformApi\Tests\Support\ScriptedServer;

/** The curl transport over a real socket: a scripted `php -S` server on 127.0.0.1. */
final class CurlTransportTest extends TestCase
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

    /** @return list<array{method: string, uri: string, headers: array<string, string>, body: string}> */
    private function newRequests(): array
    {
        return array_slice(self::$server->requests(), $this->seen);
    }

    private function client(?ClientOptions $options = null): PlatformClient
    {
        return new PlatformClient(token: 'pat_curl', baseUrl: self::$server->url, options: $options);
    }

    public function testARequestAndItsResponseGoOverTheWireIntact(): void
    {
        self::$server->script([
            'status' => 201,
            'headers' => [
                'Content-Type' => 'application/json',
                'X-Request-Id' => 'req_1',
                'Set-Cookie' => ['a=1', 'b=2'],
            ],
            'body' => json_encode(Fixtures::student('stu_w', ['first_name' => 'Zoë'])),
        ]);
        $params = ['student_number' => 'S-1', 'first_name' => 'Zoë', 'last_name' => str_repeat('x', 5000)];
        $raw = $this->client()->students->raw->create($params, new RequestOptions(idempotencyKey: 'key-1'));

        self::assertSame(201, $raw->statusCode);
        self::assertSame('req_1', $raw->requestId);
        self::assertSame(['a=1', 'b=2'], $raw->headers['set-cookie']);
        self::assertSame('Zoë', $raw->parse()->firstName);

        [$sent] = $this->newRequests();
        self::assertSame('POST', $sent['method']);
        self::assertSame('/v1/students', $sent['uri']);
        self::assertSame(json_encode($params, JSON_UNESCAPED_UNICODE), $sent['body']);
        self::assertSame('Bearer pat_curl', $sent['headers']['authorization']);
        self::assertSame('key-1', $sent['headers']['idempotency-key']);
        self::assertSame('application/json', $sent['headers']['content-type']);
        self::assertStringStartsWith(
            'platform-api-php/' . PlatformClient::VERSION . ' (PHP ',
            $sent['headers']['user-agent'],
        );
        // A 5 kB body would make curl send Expect: 100-continue and wait; it must not.
        self::assertArrayNotHasKey('expect', $sent['headers']);
    }

    public function testAnActionWithoutBodySendsContentLengthZeroAndNoContentType(): void
    {
        self::$server->script(
            ['status' => 200, 'headers' => ['Content-Type' => 'application/json'], 'body' => '{"id":"enr_1"}'],
        );
        $this->client()->enrollments->activate('enr_1');
        [$sent] = $this->newRequests();
        self::assertSame('/v1/enrollments/enr_1/activate', $sent['uri']);
        self::assertSame('', $sent['body']);
        self::assertSame('0', $sent['headers']['content-length'] ?? null);
        self::assertArrayNotHasKey('content-type', $sent['headers']);
    }

    public function testAGzippedResponseIsDecoded(): void
    {
        self::$server->script([
            'status' => 200,
            'headers' => ['Content-Type' => 'application/json'],
            'body' => json_encode(Fixtures::student('stu_gz')),
            'gzip' => true,
        ]);
        self::assertSame('stu_gz', $this->client()->students->retrieve('stu_gz')->id);
        [$sent] = $this->newRequests();
        self::assertStringContainsString('gzip', $sent['headers']['accept-encoding'] ?? '');
    }

    public function testATimeoutIsAnApiTimeoutException(): void
    {
        self::$server->script(['status' => 200, 'body' => '{}', 'sleep_ms' => 1500]);
        $start = microtime(true);
        try {
            $this->client(new ClientOptions(timeout: 0.3, maxRetries: 0))->students->retrieve('stu_1');
            self::fail('expected an ApiTimeoutException');
        } catch (ApiTimeoutException $e) {
            self::assertSame('GET', $e->method);
            self::assertStringContainsString('/v1/students/stu_1', $e->url);
        }
        self::assertLessThan(1.2, microtime(true) - $start);
        usleep(1_300_000); // let the built-in server (one worker) finish the slow answer
    }

    public function testARefusedConnectionIsAnApiConnectionException(): void
    {
        $port = ScriptedServer::freePort(); // nothing listens there
        $client = new PlatformClient(
            token: 'pat_x',
            baseUrl: "http://127.0.0.1:{$port}",
            options: new ClientOptions(maxRetries: 0),
        );
        try {
            $client->students->retrieve('stu_1');
            self::fail('expected an ApiConnectionException');
        } catch (ApiConnectionException $e) {
            self::assertNotInstanceOf(ApiTimeoutException::class, $e);
            self::assertStringContainsString('Could not reach the API', $e->getMessage());
        }
    }

    public function testAnHtml502IsRetriedThenThrownWithItsBody(): void
    {
        $page = ['status' => 502, 'headers' => ['Content-Type' => 'text/html'], 'body' => '<h1>502 Bad Gateway</h1>'];
        self::$server->script($page, $page);
        try {
            $this->client(new ClientOptions(maxRetries: 1, initialRetryDelay: 0.01))->students->retrieve('stu_1');
            self::fail('expected a ServerException');
        } catch (ServerException $e) {
            self::assertSame('<h1>502 Bad Gateway</h1>', $e->body);
            self::assertSame('HTTP 502 without a problem document: 502 Bad Gateway', $e->detail);
        }
        self::assertCount(2, $this->newRequests());
    }

    public function testAnExportDownloadIsRetriedAfterA503AndStreamedDecompressed(): void
    {
        $file = str_repeat("{\"id\":\"stu_1\",\"first_name\":\"Ana\"}\n", 2000);
        self::$server->script(
            ['status' => 503, 'headers' => ['Content-Type' => 'text/plain', 'Retry-After' => '0'], 'body' => 'busy'],
            ['status' => 200, 'headers' => ['Content-Type' => 'application/x-ndjson'], 'body' => $file, 'gzip' => true],
        );
        $out = fopen('php://temp', 'w+b');
        self::assertNotFalse($out);
        $client = $this->client(new ClientOptions(maxRetries: 2, initialRetryDelay: 0.01));
        $size = $client->exports->downloadTo('exp_1', $out);
        self::assertSame(strlen($file), $size);
        rewind($out);
        self::assertSame($file, stream_get_contents($out)); // once, decompressed, nothing of the 503
        $sent = $this->newRequests();
        self::assertCount(2, $sent);
        foreach ($sent as $request) {
            self::assertSame('/v1/exports/exp_1/file', $request['uri']);
            self::assertSame('Bearer pat_curl', $request['headers']['authorization']);
        }
    }

    public function testExportsWaitPollsUntilSucceededAndDownloadAnswersTheFileAsAString(): void
    {
        $export = ['id' => 'exp_1', 'object' => 'export', 'collection' => 'students', 'format' => 'ndjson',
            'filters' => new \stdClass(), 'row_count' => 2, 'size_bytes' => 10, 'cursor' => '1.Xk3aB9_-q1',
            'error' => null,
            'created_at' => '2026-11-28T10:00:00.000Z', 'completed_at' => null, 'expires_at' => null];
        $json = ['Content-Type' => 'application/json'];
        $file = "{\"id\":\"stu_1\"}\n{\"id\":\"stu_2\"}\n";
        self::$server->script(
            ['status' => 200, 'headers' => $json, 'body' => json_encode([...$export, 'status' => 'queued'])],
            ['status' => 200, 'headers' => $json, 'body' => json_encode([...$export, 'status' => 'running'])],
            ['status' => 200, 'headers' => $json, 'body' => json_encode([...$export, 'status' => 'succeeded'])],
            ['status' => 200, 'headers' => ['Content-Type' => 'application/x-ndjson'], 'body' => $file],
            ['status' => 200, 'headers' => $json, 'body' => json_encode(
                [...$export, 'status' => 'failed', 'error' => 'disk full'],
            )],
        );
        $client = $this->client();
        $done = $client->exports->wait('exp_1', 0.001, 5.0);
        self::assertSame(['exp_1', 'succeeded'], [$done->id, $done->status]);
        self::assertSame($file, $client->exports->download('exp_1'));
        try {
            $client->exports->wait('exp_1', 0.001);
            self::fail('expected a PlatformException');
        } catch (\PlatformApi\Exception\PlatformException $e) {
            self::assertSame('Export exp_1 failed: disk full; start a new one', $e->getMessage());
        }
        self::assertSame(
            [...array_fill(0, 3, '/v1/exports/exp_1'), '/v1/exports/exp_1/file', '/v1/exports/exp_1'],
            array_column($this->newRequests(), 'uri'),
        );
    }

    public function testTheStaticExportHelpersStillWorkAndAreDeprecated(): void
    {
        $export = ['id' => 'exp_1', 'object' => 'export', 'collection' => 'students', 'format' => 'ndjson',
            'filters' => new \stdClass(), 'row_count' => 1, 'size_bytes' => 14, 'cursor' => '1.Xk3aB9_-q1',
            'error' => null,
            'created_at' => '2026-11-28T10:00:00.000Z', 'completed_at' => null, 'expires_at' => null,
            'status' => 'succeeded'];
        $file = "{\"id\":\"stu_1\"}\n";
        self::$server->script(
            ['status' => 200, 'headers' => ['Content-Type' => 'application/json'], 'body' => json_encode($export)],
            ['status' => 200, 'headers' => ['Content-Type' => 'application/x-ndjson'], 'body' => $file],
        );
        $deprecations = [];
        set_error_handler(static function (int $level, string $message) use (&$deprecations): bool {
            $deprecations[] = [$level, $message];
            return true;
        }, E_USER_DEPRECATED);
        try {
            $client = $this->client();
            $done = Exports::wait($client, 'exp_1', 0.001);
            $out = fopen('php://temp', 'w+b');
            self::assertNotFalse($out);
            $size = Exports::download($client, 'exp_1', $out);
        } finally {
            restore_error_handler();
        }
        self::assertSame('succeeded', $done->status);
        self::assertSame(strlen($file), $size);
        rewind($out);
        self::assertSame($file, stream_get_contents($out));
        self::assertSame([
            [E_USER_DEPRECATED, 'PlatformApi\\Export\\Exports::wait($client, $id) is deprecated: '
                . 'use $client->exports->wait($id)'],
            [E_USER_DEPRECATED, 'PlatformApi\\Export\\Exports::download($client, $id, $destination) is deprecated: '
                . 'use $client->exports->downloadTo($id, $destination)'],
        ], $deprecations);
    }

    public function testAnExpiredExportDownloadIsAConflictExceptionAndWritesNoFile(): void
    {
        self::$server->script([
            'status' => 409,
            'headers' => ['Content-Type' => 'application/problem+json'],
            'body' => json_encode([
                'type' => 'https://example.com/problems/conflict',
                'title' => 'Conflict',
                'status' => 409,
                'detail' => 'Export exp_1 is expired: it has no file',
                'code' => 'conflict',
            ]),
        ]);
        $path = sys_get_temp_dir() . '/export-expired-' . bin2hex(random_bytes(6));
        try {
            $this->client()->exports->downloadTo('exp_1', $path);
            self::fail('expected a ConflictException');
        } catch (ConflictException $e) {
            self::assertSame(409, $e->statusCode);
            self::assertSame('Export exp_1 is expired: it has no file', $e->detail);
        }
        self::assertFileDoesNotExist($path);
    }

    public function testADownloadCutOffMidBodyIsNotSentAgain(): void
    {
        $part = str_repeat("{\"id\":\"stu_1\"}\n", 500);
        self::$server->script([
            'status' => 200,
            // Promises more than it sends, then closes: the connection broke mid-body.
            'headers' => ['Content-Type' => 'application/x-ndjson', 'Content-Length' => (string) (strlen($part) * 2)],
            'body' => $part,
        ]);
        $out = fopen('php://temp', 'w+b');
        self::assertNotFalse($out);
        try {
            $this->client(new ClientOptions(maxRetries: 2, initialRetryDelay: 0.01))
                ->exports->downloadTo('exp_1', $out);
            self::fail('expected an ApiConnectionException');
        } catch (ApiConnectionException $e) {
            self::assertStringContainsString('curl error 18', $e->getMessage());
        }
        // Part of the file was already written: a retry would have repeated it.
        self::assertCount(1, $this->newRequests());
    }

    public function testRedirectsAreNotFollowed(): void
    {
        self::$server->script(
            ['status' => 302, 'headers' => ['Location' => 'http://127.0.0.1:1/elsewhere'], 'body' => ''],
        );
        $response = (new CurlTransport())->send(
            new Request('GET', self::$server->url . '/v1/token', [], null, 5.0, 5.0),
        );
        self::assertSame(302, $response->status);
        self::assertSame(['http://127.0.0.1:1/elsewhere'], $response->headers['location']);
    }

    public function testOneTransportServesManyRequests(): void
    {
        $transport = new CurlTransport();
        for ($i = 0; $i < 3; $i++) {
            self::$server->script(['status' => 200 + $i, 'body' => "r{$i}"]);
            $response = $transport->send(
                new Request('GET', self::$server->url . "/x{$i}", ['accept' => 'text/plain'], null, 5.0, 5.0),
            );
            self::assertSame([200 + $i, "r{$i}"], [$response->status, $response->body]);
        }
    }
}
