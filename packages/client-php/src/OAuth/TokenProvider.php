<?php

declare(strict_types=1);

namespace PlatformApi\OAuth;

/**
 * Where a client's bearer tokens come from: a fixed token, or an OAuth grant the client runs
 * itself (ClientCredentials, RefreshToken). Implement it to plug in your own token store.
 */
interface TokenProvider
{
    /**
     * A token to send now.
     *
     * @throws \PlatformApi\Exception\OAuthException the token endpoint refused
     * @throws \PlatformApi\Exception\ApiConnectionException the token endpoint was unreachable
     */
    public function token(TokenEndpoint $endpoint): string;

    /**
     * The API refused `$token` (401). Returns true when a new token may help: the client then
     * asks token() again and replays the request, once.
     */
    public function invalidate(string $token): bool;
}
