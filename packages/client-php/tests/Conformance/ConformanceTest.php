<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Conformance;

use PHPUnit\Framework\TestCase;
use PlatformApi\ClientOptions;
use PlatformApi\Core\Model;
use PlatformApi\Core\Page;
use PlatformApi\Core\RawResponse;
use PlatformApi\Exception\ApiConnectionException;
use PlatformApi\Exception\ApiStatusException;
use PlatformApi\Exception\ApiTimeoutException;
use PlatformApi\Exception\AuthenticationException;
use PlatformApi\Exception\ConflictException;
use PlatformApi\Exception\NotFoundException;
use PlatformApi\Exception\PermissionDeniedException;
use PlatformApi\Exception\PlatformException;
use PlatformApi\Exception\RateLimitException;
use PlatformApi\Exception\ServerException;
use PlatformApi\Exception\ValidationException;
use PlatformApi\PlatformClient;
use PlatformApi\RequestOptions;

/**
 * The SDK conformance suite (conformance/http/scenarios.json) through this SDK: each scenario's
 * call made with PlatformClient against the scripted loopback server
 * (tooling/conformance/src/server.js), which judges the requests and the outcome reported here.
 * The TypeScript and Python SDKs run the same scenarios. Run by
 * `pnpm --filter @platform/conformance test`.
 */
final class ConformanceTest extends TestCase
{
    private const ROOT = __DIR__ . '/../../../..';

    /** @var resource|null */
    private static $server = null;
    private static string $origin = '';

    public static function setUpBeforeClass(): void
    {
        $node = getenv('NODE') ?: 'node';
        $process = proc_open(
            [$node, self::ROOT . '/tooling/conformance/src/server.js'],
            [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => STDERR],
            $pipes,
        );
        if (!is_resource($process)) {
            throw new \RuntimeException('Could not start the conformance server (node on PATH?)');
        }
        self::$server = $process;
        $line = (string) fgets($pipes[1]);
        if (preg_match('#^listening (http://\S+)#', $line, $m) !== 1) {
            throw new \RuntimeException("The conformance server did not start: {$line}");
        }
        self::$origin = $m[1];
    }

    public static function tearDownAfterClass(): void
    {
        if (is_resource(self::$server)) {
            // The command is an array, so no shell: this ends the node we started, by its own pid.
            proc_terminate(self::$server);
            proc_close(self::$server);
        }
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function scenarios(): array
    {
        $file = (string) file_get_contents(self::ROOT . '/conformance/http/scenarios.json');
        $cases = [];
        foreach (json_decode($file, true, 512, JSON_THROW_ON_ERROR)['scenarios'] as $scenario) {
            $cases[$scenario['name']] = [$scenario];
        }
        return $cases;
    }

    /**
     * @dataProvider scenarios
     * @param array<string, mixed> $scenario
     */
    public function testScenario(array $scenario): void
    {
        self::control('start', ['name' => $scenario['name']]);
        $outcome = $this->callOf($scenario);
        $verdict = self::control('verdict', $outcome);
        self::assertSame([], $verdict['mismatches']);
    }

    /**
     * @param array<string, mixed> $scenario
     * @return array<string, mixed>
     */
    private function callOf(array $scenario): array
    {
        $waits = [];
        $settings = $scenario['client'];
        $client = new PlatformClient(
            token: 'pat_conformance',
            baseUrl: self::$origin . ($settings['base_path'] ?? ''),
            options: new ClientOptions(
                timeout: (float) ($settings['timeout'] ?? 60.0),
                maxRetries: $settings['max_retries'] ?? 2,
                appInfo: $settings['app_info'] ?? null,
                sleep: static function (float $seconds) use (&$waits): void {
                    $waits[] = $seconds;
                },
            ),
        );
        $call = $scenario['call'];
        $ro = $call['request_options'] ?? null;
        $options = $ro === null ? null : new RequestOptions(
            idempotencyKey: $ro['idempotency_key'] ?? null,
            timeout: isset($ro['timeout']) ? (float) $ro['timeout'] : null,
            maxRetries: $ro['max_retries'] ?? null,
        );
        try {
            if (isset($call['request'])) {
                $spec = $call['request'];
                $raw = $client->request(
                    $spec['method'],
                    $spec['path'],
                    $spec['query'] ?? [],
                    $spec['body'] ?? null,
                    $options,
                );
                return ['ok' => true, 'value' => $raw->parse(), 'waits' => $waits];
            }
            $service = $client->{$call['resource']};
            $args = [];
            if (isset($call['id'])) {
                $args['id'] = $call['id'];
            }
            if (isset($call['body']) || isset($call['query'])) {
                $args['params'] = ($call['body'] ?? []) + ($call['query'] ?? []);
            }
            $args['options'] = $options;
            if ($call['raw'] ?? false) {
                /** @var RawResponse<mixed> $raw */
                $raw = $service->raw->{$call['method']}(...$args);
                return [
                    'ok' => true,
                    'value' => self::plain($raw->parse()),
                    'status' => $raw->statusCode,
                    'request_id' => $raw->requestId,
                    'headers' => array_map(static fn (array $values): string => implode(', ', $values), $raw->headers),
                    'waits' => $waits,
                ];
            }
            $result = $service->{$call['method']}(...$args);
            if ($call['iterate'] ?? false) {
                $ids = [];
                foreach ($result as $item) {
                    $ids[] = $item->id;
                }
                return ['ok' => true, 'ids' => $ids, 'waits' => $waits];
            }
            return ['ok' => true, 'value' => self::plain($result), 'waits' => $waits];
        } catch (PlatformException $e) {
            return ['ok' => false, 'error' => self::errorOutcome($e), 'waits' => $waits];
        }
    }

    private static function plain(mixed $value): mixed
    {
        return $value instanceof Model || $value instanceof Page ? $value->toArray() : $value;
    }

    /** @return array<string, mixed> */
    private static function errorOutcome(PlatformException $e): array
    {
        $kind = match (true) {
            $e instanceof ValidationException => 'validation',
            $e instanceof AuthenticationException => 'authentication',
            $e instanceof PermissionDeniedException => 'permission',
            $e instanceof NotFoundException => 'not_found',
            $e instanceof ConflictException => 'conflict',
            $e instanceof RateLimitException => 'rate_limit',
            $e instanceof ServerException => 'server',
            $e instanceof ApiStatusException => 'api',
            $e instanceof ApiTimeoutException => 'timeout',
            $e instanceof ApiConnectionException => 'connection',
            default => throw $e,
        };
        if (!$e instanceof ApiStatusException) {
            return ['kind' => $kind];
        }
        return [
            'kind' => $kind,
            'status' => $e->statusCode,
            'code' => $e->errorCode,
            'request_id' => $e->requestId,
            'detail' => $e->problem !== null ? $e->detail : null,
            'retry_after' => $e instanceof RateLimitException ? $e->retryAfter : null,
            'field_errors' => array_map(static fn ($field): string => $field->path, $e->errors),
        ];
    }

    /**
     * @param array<string, mixed> $body
     * @return array<string, mixed>
     */
    private static function control(string $action, array $body): array
    {
        $context = stream_context_create(['http' => [
            'method' => 'POST',
            'header' => 'Content-Type: application/json',
            'content' => json_encode($body, JSON_THROW_ON_ERROR | JSON_PRESERVE_ZERO_FRACTION),
            'timeout' => 30,
        ]]);
        $response = file_get_contents(self::$origin . '/__conformance/' . $action, false, $context);
        if ($response === false) {
            throw new \RuntimeException("The conformance server did not answer {$action}");
        }
        return json_decode($response, true, 512, JSON_THROW_ON_ERROR);
    }
}
