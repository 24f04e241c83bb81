<?php

declare(strict_types=1);

namespace PlatformApi\Core;

use PlatformApi\Exception\PlatformException;

/**
 * A successful response as received: status, headers (`X-RateLimit-Remaining`,
 * `Idempotent-Replayed`, …), request id and body. `parse()` turns it into what the plain method
 * returns, so `$client->students->raw->retrieve($id)->parse()` equals `$client->students->retrieve($id)`.
 *
 * @template T
 */
final class RawResponse
{
    /** The `X-Request-Id` the server answered with: quote it to support. */
    public readonly ?string $requestId;

    /** @var (\Closure(RawResponse<T>): T)|null */
    private readonly ?\Closure $parser;

    /** @var array<string, mixed> the query the request was sent with, as given */
    private array $query = [];

    /** @var (\Closure(array<string, mixed>): RawResponse<T>)|null sends the request again */
    private ?\Closure $resend = null;

    /**
     * @param array<string, list<string>> $headers names in lower case
     * @param (\Closure(RawResponse<T>): T)|null $parser
     */
    public function __construct(
        public readonly int $statusCode,
        public readonly array $headers,
        public readonly string $body,
        public readonly string $method,
        public readonly string $url,
        ?\Closure $parser = null,
    ) {
        $this->parser = $parser;
        $this->requestId = $headers['x-request-id'][0] ?? null;
    }

    /**
     * @internal HttpClient: this response, able to send its request again with another query.
     *
     * @param array<string, mixed> $query the query the request was sent with
     * @param \Closure(array<string, mixed>): RawResponse<T> $resend
     * @return RawResponse<T>
     */
    public function withResend(array $query, \Closure $resend): self
    {
        $copy = new self($this->statusCode, $this->headers, $this->body, $this->method, $this->url, $this->parser);
        $copy->query = $query;
        $copy->resend = $resend;
        return $copy;
    }

    /** @internal Whether resend() can send this response's request again (auto-paging). */
    public function canResend(): bool
    {
        return $this->resend !== null;
    }

    /**
     * @internal Auto-paging: the same request, its query changed by `$change`, sent now.
     *
     * @param \Closure(array<string, mixed>): array<string, mixed> $change
     * @return RawResponse<T>
     */
    public function resend(\Closure $change): self
    {
        if ($this->resend === null) {
            throw new \LogicException('This response was not made by HttpClient::request(): it cannot be sent again.');
        }
        return ($this->resend)($change($this->query));
    }

    /** A header's first value, the name in any case; null when absent. */
    public function header(string $name): ?string
    {
        return $this->headers[strtolower($name)][0] ?? null;
    }

    /** The body decoded as JSON (objects as associative arrays); null for an empty body. */
    public function json(): mixed
    {
        return $this->body === '' ? null : Json::decode($this->body);
    }

    /**
     * The body as a JSON object (an associative array), for the models' fromArray().
     *
     * @return array<array-key, mixed>
     * @throws PlatformException when a 2xx body is not a JSON object (a proxy's page, say)
     */
    public function object(): array
    {
        $decoded = Json::tryDecode($this->body);
        if (!is_array($decoded)) {
            $start = substr($this->body, 0, 100);
            throw new PlatformException(
                "{$this->method} {$this->url} answered {$this->statusCode} "
                . "with a body that is not a JSON object: {$start}",
            );
        }
        return $decoded;
    }

    /** @return T what the non-raw method returns (a model, a Page, or null for 204) */
    public function parse(): mixed
    {
        if ($this->parser === null) {
            /** @var T */
            return $this->json();
        }
        return ($this->parser)($this);
    }
}
