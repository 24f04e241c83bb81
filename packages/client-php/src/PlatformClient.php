<?php

declare(strict_types=1);

namespace PlatformApi;

use PlatformApi\Core\CurlTransport;
use PlatformApi\Core\HttpClient;
use PlatformApi\Core\Json;
use PlatformApi\Core\RawResponse;
use PlatformApi\Core\Transport;
use PlatformApi\Exception\InvalidArgumentException;
use PlatformApi\OAuth\StaticToken;
use PlatformApi\OAuth\TokenEndpoint;
use PlatformApi\OAuth\TokenProvider;
use PlatformApi\Service\ServiceRegistry;
use PlatformApi\Webhook\Webhooks;

/**
 * The Platform API client: one property per resource (`$client->students->list([...])`), each
 * method one operation of the API. Holds no global state: create one per token or organization.
 *
 * ```php
 * $client = new PlatformClient(token: getenv('PLATFORM_TOKEN'), baseUrl: 'https://api.example.com');
 * foreach ($client->students->list(['status' => 'active']) as $student) { … }
 * ```
 */
final class PlatformClient
{
    use ServiceRegistry;

    /** The SDK's version, sent in `User-Agent`. */
    public const VERSION = '0.1.0';

    /** Webhook verification: `$client->webhooks->unwrap($body, $headers, secret: …)`. */
    public readonly Webhooks $webhooks;
    public readonly ClientOptions $options;
    public readonly string $baseUrl;
    private readonly TokenProvider $auth;
    private readonly Transport $transport;
    private readonly HttpClient $http;

    /**
     * @param string|(\Closure(): string)|null $token a personal access token (`pat_…`) or an OAuth
     *     access token (or a closure returning the current one); default the `PLATFORM_TOKEN`
     *     environment variable. Give this or `auth`.
     * @param string|null $baseUrl where the API lives, without `/v1` (`https://api.example.com`);
     *     default the `PLATFORM_BASE_URL` environment variable
     * @param TokenProvider|null $auth OAuth: `new ClientCredentials(…)` or `new RefreshToken(…)`
     * @param Transport|null $transport how requests are sent; default CurlTransport
     */
    public function __construct(
        #[\SensitiveParameter] string|\Closure|null $token = null,
        ?string $baseUrl = null,
        ?TokenProvider $auth = null,
        ?ClientOptions $options = null,
        ?Transport $transport = null,
    ) {
        if ($token !== null && $auth !== null) {
            throw new InvalidArgumentException('PlatformClient: pass either `token` or `auth`, not both.');
        }
        if ($auth === null) {
            $token ??= self::env('PLATFORM_TOKEN');
            if ($token === null || $token === '') {
                throw new InvalidArgumentException(
                    'PlatformClient: no token. Pass `token` (a personal access token pat_… or an OAuth access token), '
                    . '`auth` (new ClientCredentials(…) or new RefreshToken(…)), or set PLATFORM_TOKEN.',
                );
            }
            $auth = new StaticToken($token);
        }
        $this->baseUrl = self::normalizeBaseUrl($baseUrl ?? self::env('PLATFORM_BASE_URL'));
        $this->auth = $auth;
        $this->options = $options ?? new ClientOptions();
        $this->transport = $transport ?? new CurlTransport();
        $userAgent = self::userAgent($this->options->appInfo);
        $clock = $this->options->clock ?? static fn (): float => microtime(true);
        $tokenEndpoint = new TokenEndpoint(
            $this->transport,
            $this->baseUrl . \PlatformApi\Service\Operations::TOKEN_PATH,
            $userAgent,
            $this->options->timeout,
            $this->options->connectTimeout,
            $clock,
        );
        $this->http = new HttpClient(
            $this->baseUrl,
            $this->auth,
            $this->options,
            $this->transport,
            $userAgent,
            $tokenEndpoint,
        );
        $this->registerServices($this->http);
        $this->webhooks = new Webhooks();
    }

    /**
     * A copy of this client with some options changed (same token or OAuth grant, same transport):
     * `$client->withOptions(maxRetries: 0)->students->list()`.
     *
     * @param array<string, string>|null $headers
     */
    public function withOptions(
        ?float $timeout = null,
        ?float $connectTimeout = null,
        ?int $maxRetries = null,
        ?float $maxRetryAfter = null,
        ?string $appInfo = null,
        ?array $headers = null,
        ?bool $idempotencyKeys = null,
    ): self {
        return new self(
            baseUrl: $this->baseUrl,
            auth: $this->auth,
            options: $this->options->with(
                timeout: $timeout,
                connectTimeout: $connectTimeout,
                maxRetries: $maxRetries,
                maxRetryAfter: $maxRetryAfter,
                appInfo: $appInfo,
                headers: $headers,
                idempotencyKeys: $idempotencyKeys,
            ),
            transport: $this->transport,
        );
    }

    /**
     * Calls any path with the client's auth, retries and errors: for an operation newer than this
     * SDK. `parse()` on the result gives the decoded JSON.
     *
     * @param array<string, mixed> $query
     * @param array<array-key, mixed>|object|null $body sent as JSON (an empty array as `{}`)
     * @return RawResponse<mixed>
     */
    public function request(
        string $method,
        string $path,
        array $query = [],
        array|object|null $body = null,
        ?RequestOptions $options = null,
    ): RawResponse {
        return $this->http->request(
            $method,
            '/' . ltrim($path, '/'),
            $query,
            $body === null ? null : Json::encodeBody($body),
            $options,
        );
    }

    /**
     * Like request() for a GET, but hands a successful response's body to `$sink` in chunks as it
     * arrives, so a large file never sits in memory; the returned response's body is empty. Auth,
     * retries (only before the first chunk) and errors are those of every other call.
     *
     * @param \Closure(string): void $sink
     * @param array<string, mixed> $query
     * @return RawResponse<mixed>
     */
    public function stream(
        string $path,
        \Closure $sink,
        array $query = [],
        ?RequestOptions $options = null,
    ): RawResponse {
        return $this->http->request('GET', '/' . ltrim($path, '/'), $query, null, $options, null, $sink);
    }

    /** `platform-api-php/0.1.0 (PHP 8.2.1; Linux)`, after `$appInfo` when given. */
    public static function userAgent(?string $appInfo = null): string
    {
        $sdk = sprintf('platform-api-php/%s (PHP %s; %s)', self::VERSION, PHP_VERSION, PHP_OS_FAMILY);
        return $appInfo !== null && $appInfo !== '' ? "{$appInfo} {$sdk}" : $sdk;
    }

    private static function env(string $name): ?string
    {
        $value = getenv($name);
        return is_string($value) && $value !== '' ? $value : null;
    }

    private static function normalizeBaseUrl(?string $baseUrl): string
    {
        if ($baseUrl === null) {
            throw new InvalidArgumentException(
                'PlatformClient: no baseUrl. Pass `baseUrl` (e.g. https://api.example.com) or set PLATFORM_BASE_URL.',
            );
        }
        $parts = parse_url($baseUrl);
        if (
            $parts === false || !isset($parts['scheme'], $parts['host'])
            || !in_array(strtolower($parts['scheme']), ['http', 'https'], true)
            || isset($parts['query']) || isset($parts['fragment'])
        ) {
            throw new InvalidArgumentException(
                'PlatformClient: `baseUrl` must be an absolute http(s) URL like https://api.example.com, '
                . "got '{$baseUrl}'.",
            );
        }
        $base = rtrim($baseUrl, '/');
        // Operation paths start with /v1; a base URL that already ends with it would double it.
        return preg_replace('#/v1$#', '', $base) ?? $base;
    }
}
