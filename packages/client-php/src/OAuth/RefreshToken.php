<?php

declare(strict_types=1);

namespace PlatformApi\OAuth;

/**
 * Access tokens from a refresh token (RFC 6749 §6), for an integration a user approved. The
 * server rotates the refresh token on every use: `onTokens` receives the new one, which you must
 * store, because presenting a spent one revokes the whole grant (reuse detection).
 *
 * A client refreshes at most once per expiry: the new access token is cached until shortly before
 * it expires, and a 401 triggers one refresh and one replay. PHP has no threads, but several
 * processes (PHP-FPM workers) sharing one stored refresh token must take turns: hold a lock
 * (flock, a database row) around the call that may refresh and the storing in `onTokens`.
 *
 * ```php
 * $auth = new RefreshToken(
 *     clientId: 'oc_…', clientSecret: '…', refreshToken: $stored,
 *     onTokens: fn (OAuthTokens $t) => $store->save($t->refreshToken),
 * );
 * ```
 */
final class RefreshToken implements TokenProvider
{
    private ?string $accessToken;
    private float $renewAt;
    private string $refreshToken;
    /** @var (\Closure(OAuthTokens): void)|null */
    private readonly ?\Closure $onTokens;

    /**
     * @param callable(OAuthTokens): void|null $onTokens called after every refresh; persist `refreshToken` here
     * @param string|null $clientSecret a confidential client's secret (HTTP Basic); null for a public client
     * @param string|null $accessToken an access token you already hold, used until it expires or is refused
     */
    public function __construct(
        public readonly string $clientId,
        #[\SensitiveParameter] string $refreshToken,
        #[\SensitiveParameter] private readonly ?string $clientSecret = null,
        ?callable $onTokens = null,
        #[\SensitiveParameter] ?string $accessToken = null,
        ?\DateTimeInterface $accessTokenExpiresAt = null,
        public readonly ?string $tokenUrl = null,
    ) {
        $this->refreshToken = $refreshToken;
        $this->onTokens = $onTokens === null ? null : \Closure::fromCallable($onTokens);
        $this->accessToken = $accessToken;
        $this->renewAt = $accessTokenExpiresAt === null
            ? PHP_FLOAT_MAX
            : (float) $accessTokenExpiresAt->format('U') - 60.0;
    }

    /** The refresh token to store: the latest one the server issued. */
    public function refreshToken(): string
    {
        return $this->refreshToken;
    }

    public function token(TokenEndpoint $endpoint): string
    {
        $now = $endpoint->now();
        if ($this->accessToken !== null && $now < $this->renewAt) {
            return $this->accessToken;
        }
        $tokens = $endpoint->request(
            $this->tokenUrl,
            ['grant_type' => 'refresh_token', 'refresh_token' => $this->refreshToken],
            $this->clientId,
            $this->clientSecret,
        );
        $this->accessToken = $tokens->accessToken;
        $this->renewAt = TokenEndpoint::renewAt($now, (float) $tokens->expiresAt->format('U'));
        if ($tokens->refreshToken !== null) {
            $this->refreshToken = $tokens->refreshToken;
        }
        if ($this->onTokens !== null) {
            ($this->onTokens)($tokens);
        }
        return $tokens->accessToken;
    }

    public function invalidate(string $token): bool
    {
        if ($token === $this->accessToken) {
            $this->accessToken = null;
        }
        return true;
    }
}
