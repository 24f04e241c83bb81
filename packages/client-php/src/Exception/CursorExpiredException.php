<?php

declare(strict_types=1);

namespace PlatformApi\Exception;

/**
 * 410 `cursor_expired`: the cursor points before the oldest change the API still keeps (changes are
 * kept 30 days), so changes after it are lost to the feed. Start again from an export
 * (`POST /v1/exports`) and follow from its cursor. Thrown by any request answering so.
 */
class CursorExpiredException extends ApiStatusException
{
    public const ADVICE = 'start again from an export (POST /v1/exports) and follow from its cursor';

    /**
     * @param array<string, list<string>> $headers response headers, names in lower case
     */
    public function __construct(
        int $statusCode,
        array $headers,
        string $body,
        string $method = '',
        string $url = '',
    ) {
        parent::__construct($statusCode, $headers, $body, $method, $url);
        $this->message .= ': ' . self::ADVICE . '.';
    }
}
