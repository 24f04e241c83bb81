<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Unit;

use PHPUnit\Framework\TestCase;
use PlatformApi\ClientOptions;
use PlatformApi\Core\RawResponse;
use PlatformApi\Core\Response;
use PlatformApi\Exception\InvalidArgumentException;
use PlatformApi\Model\Student;
use PlatformApi\OAuth\ClientCredentials;
use PlatformApi\PlatformClient;
use PlatformApi\RequestOptions;
use PlatformApi\Service\Operations;
use PlatformApi\Tests\Support\ClientFactory;
use PlatformApi\Tests\Support\FakeTransport;
use PlatformApi\Tests\Support\Fixtures;

final class ClientTest extends TestCase
{
    use ClientFactory;

    public function testEveryRequestCarriesAuthAcceptAndUserAgent(): void
    {
        $this->script(FakeTransport::json(200, Fixtures::student()));
        $this->client(
            new ClientOptions(appInfo: 'lms-sync/2.1', headers: ['X-Trace' => 't-1']),
        )->students->retrieve('stu_01');
        $headers = $this->transport->requests[0]->headers;
        self::assertSame('Bearer pat_test', $headers['authorization']);
        self::assertSame('application/json', $headers['accept']);
        self::assertSame('t-1', $headers['x-trace']);
        self::assertMatchesRegularExpression(
            '#^lms-sync/2\.1 platform-api-php/' . preg_quote(PlatformClient::VERSION, '#')
                . ' \(PHP \d+\.\d+\.\d+[^;]*; [A-Za-z]+\)$#',
            $headers['user-agent'],
        );
        self::assertSame(
            sprintf('platform-api-php/%s (PHP %s; %s)', PlatformClient::VERSION, PHP_VERSION, PHP_OS_FAMILY),
            PlatformClient::userAgent(),
        );
    }

    public function testPerRequestOptionsApplyToThatCallOnly(): void
    {
        $this->script(FakeTransport::json(200, Fixtures::student()), FakeTransport::json(200, Fixtures::student()));
        $client = $this->client(new ClientOptions(headers: ['X-Trace' => 'client']));
        $client->students->retrieve(
            'stu_01',
            new RequestOptions(headers: ['x-trace' => 'call'], timeout: 5.0, connectTimeout: 1.5),
        );
        $client->students->retrieve('stu_01');
        [$first, $second] = $this->transport->requests;
        self::assertSame(['call', 5.0, 1.5], [$first->headers['x-trace'], $first->timeout, $first->connectTimeout]);
        self::assertSame(
            ['client', 60.0, 10.0],
            [$second->headers['x-trace'], $second->timeout, $second->connectTimeout],
        );
    }

    public function testTheRawTwinGivesStatusHeadersAndRequestIdAndParsesToTheSameModel(): void
    {
        $response = static fn () => new Response(
            200,
            ['content-type' => ['application/json'], 'x-request-id' => ['req_42'], 'x-ratelimit-remaining' => ['99']],
            (string) json_encode(Fixtures::student()),
        );
        $this->script($response(), $response());
        $client = $this->client();
        $raw = $client->students->raw->retrieve('stu_01');
        self::assertInstanceOf(RawResponse::class, $raw);
        self::assertSame(200, $raw->statusCode);
        self::assertSame('req_42', $raw->requestId);
        self::assertSame('99', $raw->header('X-RateLimit-Remaining'));
        self::assertNull($raw->header('missing'));
        self::assertSame('https://api.school.test/v1/students/stu_01', $raw->url);
        self::assertInstanceOf(Student::class, $raw->parse());
        self::assertEquals($client->students->retrieve('stu_01'), $raw->parse());
        self::assertSame(Fixtures::student(), $raw->json());
    }

    public function testEveryOperationHasAMethodAndARawTwin(): void
    {
        $client = $this->client();
        foreach (Operations::ALL as $id => [, , $call]) {
            [$resource, $method] = explode('->', $call);
            self::assertTrue(property_exists($client, $resource), "{$id}: \$client->{$resource}");
            $service = $client->{$resource};
            self::assertTrue(method_exists($service, $method), "{$id}: {$call}");
            self::assertTrue(method_exists($service->raw, $method), "{$id}: {$resource}->raw->{$method}");
            $plain = new \ReflectionMethod($service, $method);
            $raw = new \ReflectionMethod($service->raw, $method);
            self::assertSame(
                array_map(static fn ($p) => (string) $p->getType() . ' $' . $p->getName(), $plain->getParameters()),
                array_map(static fn ($p) => (string) $p->getType() . ' $' . $p->getName(), $raw->getParameters()),
                "{$id}: the raw twin takes the same parameters",
            );
            self::assertSame(RawResponse::class, (string) $raw->getReturnType());
        }
        self::assertCount(count(Operations::ALL), array_unique(array_column(Operations::ALL, 2)));
    }

    public function testTheEscapeHatchUsesTheSameAuthRetriesAndErrors(): void
    {
        $this->script(FakeTransport::problem(503, 'service_unavailable'), FakeTransport::json(200, ['beta' => true]));
        $raw = $this->client()->request('POST', 'v1/beta/thing', ['x' => 1], []);
        self::assertSame(['beta' => true], $raw->parse());
        [$first, $second] = $this->transport->requests;
        self::assertSame('https://api.school.test/v1/beta/thing?x=1', $first->url);
        self::assertSame('{}', $first->body);
        self::assertSame($first->headers['idempotency-key'], $second->headers['idempotency-key']);
    }

    public function testBaseUrlForms(): void
    {
        foreach (
            [
                'https://api.school.test' => 'https://api.school.test',
                'https://api.school.test/' => 'https://api.school.test',
                'https://api.school.test/v1' => 'https://api.school.test',
                'https://gw.school.test/platform/api/v1/' => 'https://gw.school.test/platform/api',
                'http://127.0.0.1:3000' => 'http://127.0.0.1:3000',
            ] as $given => $base
        ) {
            self::assertSame($base, (new PlatformClient(token: 'pat_x', baseUrl: $given))->baseUrl, $given);
        }
        foreach (['api.school.test', 'ftp://api.school.test', 'https://api.school.test?x=1', ''] as $bad) {
            try {
                new PlatformClient(token: 'pat_x', baseUrl: $bad);
                self::fail("accepted {$bad}");
            } catch (InvalidArgumentException $e) {
                self::assertStringContainsString('baseUrl', $e->getMessage());
            }
        }
    }

    public function testTokenAndBaseUrlDefaultToTheEnvironment(): void
    {
        $saved = [getenv('PLATFORM_TOKEN'), getenv('PLATFORM_BASE_URL')];
        try {
            putenv('PLATFORM_TOKEN=pat_from_env');
            putenv('PLATFORM_BASE_URL=https://env.school.test');
            $this->script(FakeTransport::json(200, Fixtures::student()));
            $client = new PlatformClient(transport: $this->transport);
            $client->students->retrieve('stu_01');
            self::assertSame('Bearer pat_from_env', $this->transport->requests[0]->headers['authorization']);
            self::assertSame('https://env.school.test', $client->baseUrl);
            putenv('PLATFORM_TOKEN');
            $this->expectException(InvalidArgumentException::class);
            $this->expectExceptionMessage('no token');
            new PlatformClient();
        } finally {
            putenv($saved[0] === false ? 'PLATFORM_TOKEN' : "PLATFORM_TOKEN={$saved[0]}");
            putenv($saved[1] === false ? 'PLATFORM_BASE_URL' : "PLATFORM_BASE_URL={$saved[1]}");
        }
    }

    public function testTokenAndAuthTogetherAreRefused(): void
    {
        $this->expectException(InvalidArgumentException::class);
        new PlatformClient(token: 'pat_x', baseUrl: 'https://api.school.test', auth: new ClientCredentials('a', 'b'));
    }

    public function testOptionsAreValidated(): void
    {
        $invalid = [['timeout' => 0.0], ['maxRetries' => -1], ['connectTimeout' => -1.0], ['maxRetryAfter' => NAN]];
        foreach ($invalid as $args) {
            try {
                new ClientOptions(...$args);
                self::fail('accepted ' . json_encode($args));
            } catch (InvalidArgumentException) {
                self::addToAssertionCount(1);
            }
        }
    }
}
