<?php

declare(strict_types=1);

namespace PlatformApi\OAuth;

/**
 * The client credentials grant (RFC 6749 §4.4): a confidential client acting for its own
 * organization. The access token is cached and renewed shortly before it expires, and once more
 * when the API answers 401.
 *
 * ```php
 * $client = new PlatformClient(
 *     auth: new ClientCredentials(clientId: 'oc_…', clientSecret: '…', scopes: ['students:read']),
 * );
 * ```
 */
final class ClientCredentials implements TokenProvider
{
    private ?string $accessToken = null;
    private float $renewAt = 0.0;
    /** @var list<string> */
    public readonly array $scopes;

    /**
     * @param list<string>|string $scopes scopes to ask for (a list or a space-separated string);
     *     none: every scope the client is allowed
     * @param string|null $tokenUrl the token endpoint; default `<baseUrl>/oauth/token`
     */
    public function __construct(
        public readonly string $clientId,
        #[\SensitiveParameter] private readonly string $clientSecret,
        array|string $scopes = [],
        public readonly ?string $tokenUrl = null,
    ) {
        $this->scopes = is_string($scopes)
            ? array_values(array_filter(explode(' ', $scopes), static fn (string $s) => $s !== ''))
            : array_values($scopes);
    }

    public function token(TokenEndpoint $endpoint): string
    {
        $now = $endpoint->now();
        if ($this->accessToken !== null && $now < $this->renewAt) {
            return $this->accessToken;
        }
        $form = ['grant_type' => 'client_credentials'];
        if ($this->scopes !== []) {
            $form['scope'] = implode(' ', $this->scopes);
        }
        $tokens = $endpoint->request($this->tokenUrl, $form, $this->clientId, $this->clientSecret);
        $this->accessToken = $tokens->accessToken;
        $this->renewAt = TokenEndpoint::renewAt($now, (float) $tokens->expiresAt->format('U'));
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
