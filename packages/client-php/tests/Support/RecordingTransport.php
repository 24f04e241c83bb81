<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Support;

use PlatformApi\Core\CurlTransport;
use PlatformApi\Core\Request;
use PlatformApi\Core\Response;
use PlatformApi\Core\Transport;
use PlatformApi\Service\Operations;

/**
 * The live suite's transport: the real curl transport, plus a record of which operations of the
 * API answered 2xx, so OperationCoverageTest can fail when one was never exercised.
 */
final class RecordingTransport implements Transport
{
    /** @var array<string, int> operation id => successful calls, over the whole run */
    public static array $succeeded = [];
    /** @var list<Request> this instance's requests */
    public array $requests = [];
    /** @var list<Response> */
    public array $responses = [];

    public function __construct(private readonly Transport $inner = new CurlTransport())
    {
    }

    public function send(Request $request): Response
    {
        $this->requests[] = $request;
        $response = $this->inner->send($request);
        $this->responses[] = $response;
        $operation = self::operationOf($request->method, $request->url);
        if ($operation !== null && $response->status >= 200 && $response->status < 300) {
            self::$succeeded[$operation] = (self::$succeeded[$operation] ?? 0) + 1;
        }
        return $response;
    }

    /** The operation id a request is for, from the generated list of operations. */
    public static function operationOf(string $method, string $url): ?string
    {
        $path = (string) parse_url($url, PHP_URL_PATH);
        foreach (Operations::ALL as $id => [$opMethod, $template]) {
            $pattern = '#^(?:/[^/]+)*?' . preg_replace(
                '/\\\\\{[^}]+\\\\\}/',
                '[^/]+',
                preg_quote($template, '#'),
            ) . '$#';
            if ($opMethod === $method && preg_match($pattern, $path) === 1) {
                return $id;
            }
        }
        return null;
    }
}
