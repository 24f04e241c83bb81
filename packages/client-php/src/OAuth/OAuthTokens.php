<?php

declare(strict_types=1);

namespace PlatformApi\OAuth;

/** What the token endpoint returned: handed to RefreshToken's `onTokens` callback. */
final class OAuthTokens
{
    public function __construct(
        public readonly string $accessToken,
        /** When the access token stops working (from `expires_in`). */
        public readonly \DateTimeImmutable $expiresAt,
        /** The refresh token to use next time: the server rotates it, so the previous one is spent. */
        public readonly ?string $refreshToken = null,
        public readonly ?string $scope = null,
        public readonly string $tokenType = 'Bearer',
    ) {
    }
}
