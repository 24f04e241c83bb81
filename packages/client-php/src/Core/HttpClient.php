<?php

declare(strict_types=1);

namespace PlatformApi\Core;

use PlatformApi\ClientOptions;
use PlatformApi\Exception\ApiConnectionException;
use PlatformApi\Exception\ApiStatusException;
use PlatformApi\OAuth\TokenEndpoint;
use PlatformApi\OAuth\TokenProvider;
use PlatformApi\RequestOptions;

/**
 * One logical API call: headers, auth, the retry loop and error mapping. Every generated service
 * method goes through request(), so all of them behave alike.
 *
 * @internal used by the generated services and PlatformClient::request()
 */
final class HttpClient
{
    private readonly Deprecation $deprecation;

    public function __construct(
        public readonly string $baseUrl,
        private readonly TokenProvider $auth,
        public readonly ClientOptions $options,
        private readonly Transport $transport,
        private readonly string $userAgent,
        private readonly TokenEndpoint $tokenEndpoint,
    ) {
        $this->deprecation = new Deprecation();
    }

    /**
     * Sends the request, retrying what is safe to retry, and returns the 2xx response.
     *
     * @template T
     * @param array<string, mixed> $query
     * @param string|Upload|null $body an encoded JSON body (see Json::encodeBody()), a file to
     *     upload (multipart/form-data), null for none
     * @param (\Closure(RawResponse<T>): T)|null $parse what RawResponse::parse() returns
     * @param (\Closure(string): void)|null $sink takes a 2xx body in chunks as it arrives (bounded
     *     memory; the returned body is then empty). Retries happen only before the first chunk.
     * @return RawResponse<T>
     * @throws ApiStatusException for a non-2xx answer (by status: NotFoundException, …)
     * @throws ApiConnectionException when no answer arrived
     */
    public function request(
        string $method,
        string $path,
        array $query = [],
        string|Upload|null $body = null,
        ?RequestOptions $options = null,
        ?\Closure $parse = null,
        ?\Closure $sink = null,
    ): RawResponse {
        $response = $this->send($method, $path, $query, $body, $options, $parse, $sink);
        if ($sink !== null) {
            return $response;
        }
        // A page's next request (a list's cursor) is this one with its query changed.
        return $response->withResend(
            $query,
            fn (array $query): RawResponse => $this->request($method, $path, $query, $body, $options, $parse),
        );
    }

    /**
     * request() without the way to send it again.
     *
     * @template T
     * @param array<string, mixed> $query
     * @param (\Closure(RawResponse<T>): T)|null $parse
     * @param (\Closure(string): void)|null $sink
     * @return RawResponse<T>
     */
    private function send(
        string $method,
        string $path,
        array $query,
        string|Upload|null $body,
        ?RequestOptions $options,
        ?\Closure $parse,
        ?\Closure $sink,
    ): RawResponse {
        $method = strtoupper($method);
        $queryString = Query::build($query);
        $url = $this->baseUrl . $path . ($queryString !== '' ? '?' . $queryString : '');

        $headers = ['accept' => 'application/json', 'user-agent' => $this->userAgent];
        if ($body instanceof Upload) {
            $format = $query['format'] ?? null;
            [$body, $headers['content-type']] = $body->encode(is_string($format) ? $format : null);
        } elseif ($body !== null) {
            $headers['content-type'] = 'application/json';
        }
        foreach ([$this->options->headers, $options?->headers ?? []] as $extra) {
            foreach ($extra as $name => $value) {
                $headers[strtolower((string) $name)] = (string) $value;
            }
        }
        if ($options?->idempotencyKey !== null) {
            $headers['idempotency-key'] = $options->idempotencyKey;
        }
        // One key per call, made before the first attempt: every retry sends the same one, so the
        // server recognises a repeat and answers it without doing the work twice.
        if ($method === 'POST' && $this->options->idempotencyKeys && !isset($headers['idempotency-key'])) {
            $headers['idempotency-key'] = self::uuid4();
        }
        $keyed = isset($headers['idempotency-key']);
        $retriable = $keyed || in_array($method, Retry::IDEMPOTENT_METHODS, true);
        $maxRetries = $options?->maxRetries ?? $this->options->maxRetries;
        $timeout = $options?->timeout ?? $this->options->timeout;
        $connectTimeout = $options?->connectTimeout ?? $this->options->connectTimeout;
        $ownAuthorization = isset($headers['authorization']);

        $streamed = false;
        $countingSink = $sink === null ? null : static function (string $chunk) use ($sink, &$streamed): void {
            $streamed = true;
            $sink($chunk);
        };

        $renewedToken = false;
        for ($attempt = 0;; $attempt++) {
            $token = null;
            try {
                if (!$ownAuthorization) {
                    $token = $this->auth->token($this->tokenEndpoint);
                    $headers['authorization'] = 'Bearer ' . $token;
                }
                $request = new Request($method, $url, $headers, $body, $timeout, $connectTimeout, $countingSink);
                $response = $this->transport->send($request);
            } catch (ApiConnectionException $e) {
                // Part of the body already went to the sink: sending again would repeat it.
                if (!$retriable || $attempt >= $maxRetries || $streamed) {
                    throw $e;
                }
                $options = $this->options;
                $this->sleep(Retry::backoff($attempt, $options->initialRetryDelay, $options->maxRetryDelay));
                continue;
            }
            $this->deprecation->warnOnce($method, $url, $response->headers);
            if ($response->status >= 200 && $response->status < 300) {
                if ($sink !== null) {
                    // A transport that does not stream returned the whole body: hand it over.
                    if ($response->body !== '') {
                        $sink($response->body);
                    }
                    return new RawResponse($response->status, $response->headers, '', $method, $url, $parse);
                }
                return new RawResponse($response->status, $response->headers, $response->body, $method, $url, $parse);
            }
            // An OAuth access token revoked or expired early: renew it once and send again.
            if ($response->status === 401 && $token !== null && !$renewedToken && $this->auth->invalidate($token)) {
                $renewedToken = true;
                $attempt--;
                continue;
            }
            $error = ApiStatusException::fromResponse(
                $response->status,
                $response->headers,
                $response->body,
                $method,
                $url,
            );
            $delay = Retry::delay(
                $response->status,
                $response->headers,
                $retriable,
                $keyed,
                $attempt,
                $this->options->initialRetryDelay,
                $this->options->maxRetryDelay,
                $this->options->maxRetryAfter,
            );
            if ($delay === null || $attempt >= $maxRetries) {
                throw $error;
            }
            $this->sleep($delay);
        }
    }

    private function sleep(float $seconds): void
    {
        if ($this->options->sleep !== null) {
            ($this->options->sleep)($seconds);
            return;
        }
        if ($seconds > 0) {
            usleep((int) round($seconds * 1_000_000));
        }
    }

    /** A random (version 4) UUID for an Idempotency-Key. */
    public static function uuid4(): string
    {
        $bytes = random_bytes(16);
        $bytes[6] = chr((ord($bytes[6]) & 0x0f) | 0x40);
        $bytes[8] = chr((ord($bytes[8]) & 0x3f) | 0x80);
        return vsprintf('%s%s-%s-%s-%s-%s%s%s', str_split(bin2hex($bytes), 4));
    }
}
