<?php

declare(strict_types=1);

namespace PlatformApi\OAuth;

use PlatformApi\Exception\InvalidArgumentException;

/**
 * A token you manage: a personal access token (`pat_…`) or an OAuth access token, or a closure
 * that returns the current one (called before each request, and once more after a 401).
 */
final class StaticToken implements TokenProvider
{
    /** @param string|(\Closure(): string) $token */
    public function __construct(#[\SensitiveParameter] private readonly string|\Closure $token)
    {
        if (is_string($token) && trim($token) === '') {
            throw new InvalidArgumentException(
                'The token is empty: pass a personal access token (pat_…) or an OAuth access token.',
            );
        }
    }

    public function token(TokenEndpoint $endpoint): string
    {
        if (is_string($this->token)) {
            return $this->token;
        }
        $token = ($this->token)();
        if (!is_string($token) || $token === '') {
            throw new InvalidArgumentException('The token closure must return a non-empty string.');
        }
        return $token;
    }

    public function invalidate(string $token): bool
    {
        // A fixed token stays refused; a closure may hand out a renewed one.
        return $this->token instanceof \Closure;
    }
}
