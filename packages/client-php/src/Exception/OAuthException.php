<?php

declare(strict_types=1);

namespace PlatformApi\Exception;

use PlatformApi\Core\Json;

/**
 * The OAuth token endpoint refused (RFC 6749 §5.2): `error` is e.g. `invalid_grant` (a refresh
 * token spent or revoked) or `invalid_client`. An AuthenticationException, since no call can be
 * authenticated until it is resolved.
 */
class OAuthException extends AuthenticationException
{
    /** The OAuth `error` code (also in `errorCode`). */
    public readonly string $error;
    public readonly ?string $errorDescription;

    /** @param array<string, list<string>> $headers */
    public function __construct(int $statusCode, array $headers, string $body, string $method = '', string $url = '')
    {
        parent::__construct($statusCode, $headers, $body, $method, $url);
        $decoded = Json::tryDecode($body);
        $error = $this->errorCode ?? 'server_error';
        $description = is_array($decoded) && is_string($decoded['error_description'] ?? null)
            ? $decoded['error_description']
            : null;
        $this->error = $error;
        $this->errorDescription = $description;
        $this->message = "The token endpoint refused ({$statusCode}): {$error}"
            . ($description !== null ? " ({$description})" : '');
    }
}
