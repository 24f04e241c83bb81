<?php

declare(strict_types=1);

namespace PlatformApi\Exception;

use PlatformApi\Core\Json;

/**
 * The API answered with a non-2xx status. Carries the RFC 9457 problem document (`problem`), its
 * stable `errorCode` (the problem's `code`: `Exception::getCode()` is the HTTP status, as PHP
 * requires an int there) and the `requestId` to quote to support.
 */
class ApiStatusException extends PlatformException
{
    /** Stable machine-readable code (`not_found`, `rate_limited`, …); null when the body was no problem document. */
    public readonly ?string $errorCode;
    /** What went wrong this time, for humans. */
    public readonly string $detail;
    /** The problem's `request_id`, else the `X-Request-Id` response header. */
    public readonly ?string $requestId;
    /** @var array<string, mixed>|null The whole problem+json body, unknown members included. */
    public readonly ?array $problem;
    /** @var list<FieldError> Each offending parameter, from the problem's `errors[]`. */
    public readonly array $errors;

    /**
     * @param array<string, list<string>> $headers response headers, names in lower case
     */
    public function __construct(
        public readonly int $statusCode,
        public readonly array $headers,
        /** The raw response body, also when it was not a problem document (an HTML page from a proxy). */
        public readonly string $body,
        public readonly string $method = '',
        public readonly string $url = '',
    ) {
        $problem = self::problemOf($body);
        $this->problem = $problem;
        // An OAuth endpoint answers in the RFC 6749 §5.2 shape instead: `error`, `error_description`.
        $oauth = $problem === null ? Json::tryDecode($body) : null;
        $oauthError = is_array($oauth) && is_string($oauth['error'] ?? null) ? $oauth['error'] : null;
        $this->errorCode = is_string($problem['code'] ?? null) ? $problem['code'] : $oauthError;
        $this->detail = match (true) {
            is_string($problem['detail'] ?? null) => $problem['detail'],
            $oauthError !== null && is_string($oauth['error_description'] ?? null) => $oauth['error_description'],
            default => self::describeNonProblem($statusCode, $body),
        };
        $this->requestId = is_string($problem['request_id'] ?? null)
            ? $problem['request_id']
            : (($headers['x-request-id'][0] ?? null) ?: null);
        $this->errors = self::fieldErrorsOf($problem);
        $message = $statusCode . ($this->errorCode !== null ? ' ' . $this->errorCode : '') . ': ' . $this->detail
            . ($this->requestId !== null ? " (request {$this->requestId})" : '');
        parent::__construct($message, $statusCode);
    }

    /**
     * The subclass that fits the status, so callers can catch the kind they handle.
     *
     * @param array<string, list<string>> $headers
     */
    public static function fromResponse(
        int $status,
        array $headers,
        string $body,
        string $method = '',
        string $url = '',
    ): self {
        return match (true) {
            $status === 400 => new ValidationException($status, $headers, $body, $method, $url),
            $status === 401 => new AuthenticationException($status, $headers, $body, $method, $url),
            $status === 403 => new PermissionDeniedException($status, $headers, $body, $method, $url),
            $status === 404 => new NotFoundException($status, $headers, $body, $method, $url),
            $status === 409 => new ConflictException($status, $headers, $body, $method, $url),
            $status === 410 && (self::problemOf($body)['code'] ?? null) === 'cursor_expired'
                => new CursorExpiredException($status, $headers, $body, $method, $url),
            $status === 429 => new RateLimitException($status, $headers, $body, $method, $url),
            $status >= 500 => new ServerException($status, $headers, $body, $method, $url),
            default => new self($status, $headers, $body, $method, $url),
        };
    }

    /** A response header's first value, the name in any case. */
    public function header(string $name): ?string
    {
        return $this->headers[strtolower($name)][0] ?? null;
    }

    /** @return array<string, mixed>|null */
    private static function problemOf(string $body): ?array
    {
        $decoded = Json::tryDecode($body);
        if (!is_array($decoded) || array_is_list($decoded)) {
            return null;
        }
        // A problem document has at least a numeric status and a title or a code (RFC 9457 §3).
        if (!is_int($decoded['status'] ?? null) || !(isset($decoded['title']) || isset($decoded['code']))) {
            return null;
        }
        /** @var array<string, mixed> $decoded */
        return $decoded;
    }

    /**
     * @param array<string, mixed>|null $problem
     * @return list<FieldError>
     */
    private static function fieldErrorsOf(?array $problem): array
    {
        $items = $problem['errors'] ?? null;
        if (!is_array($items)) {
            return [];
        }
        $errors = [];
        foreach ($items as $item) {
            if (!is_array($item)) {
                continue;
            }
            $errors[] = new FieldError(
                is_string($item['path'] ?? null) ? $item['path'] : '',
                is_string($item['message'] ?? null) ? $item['message'] : '',
                is_string($item['code'] ?? null) ? $item['code'] : null,
            );
        }
        return $errors;
    }

    private static function describeNonProblem(int $status, string $body): string
    {
        $text = trim(preg_replace('/\s+/', ' ', strip_tags($body)) ?? '');
        // 200 characters at most; without ext-mbstring, so by regex (bytes if it is not UTF-8).
        if (strlen($text) > 200) {
            $text = (preg_match('/^.{200}/su', $text, $m) === 1 ? $m[0] : substr($text, 0, 200)) . '…';
        }
        return "HTTP {$status} without a problem document" . ($text !== '' ? ": {$text}" : '');
    }
}
