<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Unit;

use PHPUnit\Framework\TestCase;
use PlatformApi\Core\Response;
use PlatformApi\Exception\ApiStatusException;
use PlatformApi\Exception\AuthenticationException;
use PlatformApi\Exception\ConflictException;
use PlatformApi\Exception\ExceptionInterface;
use PlatformApi\Exception\FieldError;
use PlatformApi\Exception\NotFoundException;
use PlatformApi\Exception\PermissionDeniedException;
use PlatformApi\Exception\PlatformException;
use PlatformApi\Exception\RateLimitException;
use PlatformApi\Exception\ServerException;
use PlatformApi\Exception\ValidationException;
use PlatformApi\Tests\Support\ClientFactory;
use PlatformApi\Tests\Support\FakeTransport;

final class ErrorMappingTest extends TestCase
{
    use ClientFactory;

    /** @return iterable<string, array{int, class-string<ApiStatusException>}> */
    public static function statuses(): iterable
    {
        yield '400' => [400, ValidationException::class];
        yield '401' => [401, AuthenticationException::class];
        yield '403' => [403, PermissionDeniedException::class];
        yield '404' => [404, NotFoundException::class];
        yield '409' => [409, ConflictException::class];
        yield '429' => [429, RateLimitException::class];
        yield '500' => [500, ServerException::class];
        yield '503' => [503, ServerException::class];
        yield '406 (no subclass)' => [406, ApiStatusException::class];
    }

    /**
     * @dataProvider statuses
     * @param class-string<ApiStatusException> $class
     */
    public function testEachStatusMapsToItsClassWithTheProblemsFields(int $status, string $class): void
    {
        $this->script(
            FakeTransport::problem($status, 'some_code', 'What went wrong.', ['future_member' => ['x' => 1]]),
        );
        try {
            $this->client(new \PlatformApi\ClientOptions(maxRetries: 0))->students->retrieve('stu_01');
            self::fail("expected {$class}");
        } catch (ApiStatusException $e) {
            self::assertSame($class, get_class($e));
            self::assertInstanceOf(ExceptionInterface::class, $e);
            self::assertInstanceOf(PlatformException::class, $e);
            self::assertSame($status, $e->statusCode);
            self::assertSame($status, $e->getCode());
            self::assertSame('some_code', $e->errorCode);
            self::assertSame('What went wrong.', $e->detail);
            self::assertSame("req_{$status}", $e->requestId);
            // Unknown extension members of the problem document are kept.
            self::assertSame(['x' => 1], $e->problem['future_member'] ?? null);
            self::assertSame('GET', $e->method);
            self::assertSame('https://api.school.test/v1/students/stu_01', $e->url);
            self::assertStringContainsString(
                "{$status} some_code: What went wrong. (request req_{$status})",
                $e->getMessage(),
            );
        }
    }

    public function testValidationErrorsListEachOffendingParameter(): void
    {
        $this->script(FakeTransport::problem(400, 'validation_error', 'Invalid request.', ['errors' => [
            [
                'path' => 'query.per_page',
                'message' => 'per_page must be an integer between 1 and 100',
                'code' => 'too_big',
            ],
            ['path' => 'body.email', 'message' => 'Invalid email'],
            'not an object',
        ]]));
        try {
            $this->client()->students->list(['per_page' => 500]);
            self::fail('expected a ValidationException');
        } catch (ValidationException $e) {
            self::assertEquals([
                new FieldError('query.per_page', 'per_page must be an integer between 1 and 100', 'too_big'),
                new FieldError('body.email', 'Invalid email', null),
            ], $e->errors);
        }
    }

    public function testAnHtml502FromAProxyIsAServerExceptionWithTheBody(): void
    {
        $html = "<html><head><title>502 Bad Gateway</title></head>\n<body><h1>Bad Gateway</h1></body></html>";
        $this->script(
            ...array_fill(
                0,
                3,
                new Response(502, ['content-type' => ['text/html'], 'x-request-id' => ['req_proxy']], $html),
            ),
        );
        try {
            $this->client()->students->retrieve('stu_01');
            self::fail('expected a ServerException');
        } catch (ServerException $e) {
            self::assertSame(502, $e->statusCode);
            self::assertNull($e->errorCode);
            self::assertNull($e->problem);
            self::assertSame($html, $e->body);
            self::assertSame('req_proxy', $e->requestId);
            self::assertSame('HTTP 502 without a problem document: 502 Bad Gateway Bad Gateway', $e->detail);
            self::assertSame('text/html', $e->header('Content-Type'));
        }
        self::assertCount(3, $this->transport->requests, 'a 502 is retried like any 5xx');
    }

    public function testAnEmptyErrorBodyStillMakesAnException(): void
    {
        $this->script(new Response(404, [], ''));
        try {
            $this->client()->students->retrieve('stu_01');
            self::fail('expected a NotFoundException');
        } catch (NotFoundException $e) {
            self::assertSame('HTTP 404 without a problem document', $e->detail);
            self::assertSame([], $e->errors);
        }
    }

    public function testRateLimitExceptionCarriesRetryAfter(): void
    {
        $this->script(FakeTransport::problem(429, 'rate_limited', headers: ['Retry-After' => '61']));
        try {
            $this->client()->students->retrieve('stu_01');
            self::fail('expected a RateLimitException');
        } catch (RateLimitException $e) {
            self::assertSame(61, $e->retryAfter);
            self::assertSame('61', $e->header('retry-after'));
        }
    }

    public function testASuccessWhoseBodyIsNotJsonIsAPlatformException(): void
    {
        $this->script(new Response(200, ['content-type' => ['text/html']], '<html>login</html>'));
        $this->expectException(PlatformException::class);
        $this->expectExceptionMessageMatches('/answered 200 with a body that is not a JSON object/');
        $this->client()->students->retrieve('stu_01');
    }
}
