<?php

declare(strict_types=1);

namespace PlatformApi\OAuth;

use PlatformApi\Core\Json;
use PlatformApi\Core\Request;
use PlatformApi\Core\Transport;
use PlatformApi\Exception\OAuthException;

/**
 * Calls the OAuth 2.0 token endpoint: one form-encoded POST with HTTP Basic client
 * authentication (RFC 6749 §2.3.1, §4.4, §6). Written here rather than taken from an OAuth
 * library because the SDK may depend on ext-curl and ext-json only.
 */
final class TokenEndpoint
{
    public function __construct(
        private readonly Transport $transport,
        /** `<baseUrl>/oauth/token` unless a provider names its own. */
        public readonly string $defaultUrl,
        private readonly string $userAgent,
        private readonly float $timeout,
        private readonly float $connectTimeout,
        /** @var \Closure(): float */
        private readonly \Closure $clock,
    ) {
    }

    /** Seconds since the epoch, from the client's clock (tests move it). */
    public function now(): float
    {
        return ($this->clock)();
    }

    /**
     * POSTs the grant and returns the tokens.
     *
     * @param array<string, string> $form `grant_type` and its parameters
     * @throws OAuthException the endpoint refused, or answered without an access token
     * @throws \PlatformApi\Exception\ApiConnectionException
     */
    public function request(?string $url, array $form, string $clientId, ?string $clientSecret): OAuthTokens
    {
        $url ??= $this->defaultUrl;
        $headers = [
            'accept' => 'application/json',
            'content-type' => 'application/x-www-form-urlencoded',
            'user-agent' => $this->userAgent,
        ];
        if ($clientSecret !== null) {
            // RFC 6749 §2.3.1: both parts form-urlencoded before base64.
            $credentials = rawurlencode($clientId) . ':' . rawurlencode($clientSecret);
            $headers['authorization'] = 'Basic ' . base64_encode($credentials);
        } else {
            $form['client_id'] = $clientId; // a public client identifies itself in the body
        }
        $response = $this->transport->send(new Request(
            'POST',
            $url,
            $headers,
            http_build_query($form, '', '&', PHP_QUERY_RFC3986),
            $this->timeout,
            $this->connectTimeout,
        ));
        $body = Json::tryDecode($response->body);
        $ok = $response->status >= 200 && $response->status < 300;
        if (!$ok || !is_array($body) || !is_string($body['access_token'] ?? null)) {
            throw new OAuthException($response->status, $response->headers, $response->body, 'POST', $url);
        }
        $expiresIn = $body['expires_in'] ?? null;
        $expiresIn = is_int($expiresIn) || is_float($expiresIn) ? (float) $expiresIn : 3600.0;
        return new OAuthTokens(
            $body['access_token'],
            (new \DateTimeImmutable('@' . (int) floor($this->now() + $expiresIn))),
            is_string($body['refresh_token'] ?? null) ? $body['refresh_token'] : null,
            is_string($body['scope'] ?? null) ? $body['scope'] : null,
            is_string($body['token_type'] ?? null) ? $body['token_type'] : 'Bearer',
        );
    }

    /**
     * When to stop using a token that expires at `$expiresAt`: `min(60, lifetime / 2)` seconds
     * early, so none expires in flight and a short-lived one is still used for half its life.
     */
    public static function renewAt(float $obtainedAt, float $expiresAt): float
    {
        $lifetime = max(0.0, $expiresAt - $obtainedAt);
        return $expiresAt - min(60.0, $lifetime / 2);
    }
}
