<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Support;

use PlatformApi\Core\Request;
use PlatformApi\Core\Response;
use PlatformApi\Core\Transport;

/**
 * A transport answering from a script, through the SDK's public `transport:` option, and keeping
 * every request it was given. Each step is a Response, an exception to throw (a connection
 * error), or a closure that builds the response from the request.
 */
final class FakeTransport implements Transport
{
    /** @var list<Request> */
    public array $requests = [];
    /** @var list<Response|\Throwable|\Closure(Request): Response> */
    private array $script;

    public function __construct(Response|\Throwable|\Closure ...$script)
    {
        $this->script = array_values($script);
    }

    public function push(Response|\Throwable|\Closure ...$steps): void
    {
        array_push($this->script, ...$steps);
    }

    public function send(Request $request): Response
    {
        $this->requests[] = $request;
        $next = array_shift($this->script);
        if ($next === null) {
            throw new \LogicException("No response scripted for {$request->method} {$request->url}");
        }
        if ($next instanceof \Throwable) {
            throw $next;
        }
        return $next instanceof \Closure ? $next($request) : $next;
    }

    /** The steps not used yet. */
    public function remaining(): int
    {
        return count($this->script);
    }

    /** @param array<string, string> $headers */
    public static function json(int $status, mixed $body, array $headers = []): Response
    {
        $lower = ['content-type' => ['application/json']];
        foreach ($headers as $name => $value) {
            $lower[strtolower($name)] = [$value];
        }
        return new Response($status, $lower, json_encode($body, JSON_THROW_ON_ERROR));
    }

    /**
     * A problem+json answer as the server sends it.
     *
     * @param array<string, mixed> $extra
     * @param array<string, string> $headers
     */
    public static function problem(
        int $status,
        string $code,
        string $detail = 'Something is wrong.',
        array $extra = [],
        array $headers = [],
    ): Response {
        $body = [
            'type' => 'http://127.0.0.1:3000/docs/errors#' . $code,
            'title' => ucfirst(str_replace('_', ' ', $code)),
            'status' => $status,
            'detail' => $detail,
            'instance' => '/v1/students',
            'code' => $code,
            'request_id' => 'req_' . $status,
        ] + $extra;
        $lower = ['content-type' => ['application/problem+json']];
        foreach ($headers as $name => $value) {
            $lower[strtolower($name)] = [$value];
        }
        return new Response($status, $lower, json_encode($body, JSON_THROW_ON_ERROR));
    }
}
