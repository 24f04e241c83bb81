<?php

declare(strict_types=1);

namespace PlatformApi\Webhook;

use PlatformApi\Exception\InvalidArgumentException;
use PlatformApi\Exception\WebhookVerificationException as Failure;
use PlatformApi\Model\Event;

/**
 * Standard Webhooks (https://www.standardwebhooks.com) verification and signing, written into the
 * SDK so it needs no other package. Verifies the raw body's HMAC-SHA256 in constant time against
 * every `v1` signature and every secret given, checks the timestamp against a ±300 s window, and
 * returns the typed event. Never lets a malformed header escape as anything but a
 * WebhookVerificationException.
 *
 * ```php
 * $event = (new Webhook(getenv('PLATFORM_WEBHOOK_SECRET')))
 *     ->verify(file_get_contents('php://input'), getallheaders());
 * ```
 */
final class Webhook
{
    public const DEFAULT_TOLERANCE = 300;
    private const PREFIX = 'whsec_';
    private const SECRET_HINT = 'Use the secret returned when the endpoint was created or its secret rotated.';

    /** @var list<string> decoded keys */
    private readonly array $keys;

    /**
     * @param string|list<string> $secret the endpoint's signing secret (`whsec_…`); during a
     *     rotation both the new and the old one, and a signature by either is accepted
     * @param int $tolerance how far `webhook-timestamp` may be from now, either way, in seconds
     */
    public function __construct(
        #[\SensitiveParameter] string|array $secret,
        private readonly int $tolerance = self::DEFAULT_TOLERANCE,
    ) {
        $secrets = is_string($secret) ? [$secret] : array_values($secret);
        if ($secrets === []) {
            throw new Failure(
                Failure::INVALID_SECRET,
                "No webhook secret given: pass the endpoint's signing secret (whsec_…), "
                . 'or a list of them during a rotation.',
            );
        }
        if ($tolerance < 0) {
            throw new InvalidArgumentException("The tolerance must be >= 0 seconds, got {$tolerance}.");
        }
        $keys = [];
        foreach ($secrets as $index => $value) {
            $which = count($secrets) === 1 ? 'The webhook secret' : 'Webhook secret #' . ($index + 1);
            if (!is_string($value) || !str_starts_with($value, self::PREFIX)) {
                throw new Failure(
                    Failure::INVALID_SECRET,
                    "{$which} does not start with \"whsec_\": it is not a webhook signing secret (an API token?). "
                    . self::SECRET_HINT,
                );
            }
            $key = self::decodeBase64(substr($value, strlen(self::PREFIX)));
            if ($key === null || $key === '') {
                throw new Failure(
                    Failure::INVALID_SECRET,
                    "{$which} is not \"whsec_\" followed by base64 (truncated or altered when copied?). "
                    . self::SECRET_HINT,
                );
            }
            $keys[] = $key;
        }
        $this->keys = $keys;
    }

    /**
     * Checks a delivery and returns its event.
     *
     * @param string $payload the raw request body, exactly as received (`file_get_contents('php://input')`),
     *     never json_decode()d and re-encoded
     * @param array<string, string|list<string>> $headers the request headers, names in any case:
     *     getallheaders(), $_SERVER (`HTTP_WEBHOOK_ID`) or a PSR-7 getHeaders()
     * @param int|null $now the current Unix time; tests pass a fixed one
     * @throws Failure
     */
    public function verify(string $payload, array $headers, ?int $now = null): EventInterface
    {
        $this->verifySignature($payload, $headers, $now);
        return self::parseEvent($payload);
    }

    /**
     * Checks the signature and timestamp only, without reading the body.
     *
     * @param array<string, string|list<string>> $headers
     * @throws Failure
     */
    public function verifySignature(string $payload, array $headers, ?int $now = null): void
    {
        $normalized = self::normalizeHeaders($headers);
        $missing = [];
        $values = [];
        foreach (['webhook-id', 'webhook-timestamp', 'webhook-signature'] as $name) {
            $value = trim($normalized[$name] ?? '');
            if ($value === '') {
                $missing[] = $name;
            }
            $values[$name] = $value;
        }
        if ($missing !== []) {
            throw new Failure(
                Failure::MISSING_HEADER,
                'Missing webhook header' . (count($missing) > 1 ? 's ' : ' ') . implode(', ', $missing)
                . ': a Platform delivery always carries webhook-id, webhook-timestamp and webhook-signature. '
                . 'Pass the request headers as received (getallheaders() or $_SERVER).',
            );
        }
        $timestamp = $values['webhook-timestamp'];
        if (preg_match('/^\d{1,15}$/', $timestamp) !== 1) {
            throw new Failure(
                Failure::INVALID_TIMESTAMP,
                'The webhook-timestamp header ' . json_encode($timestamp) . ' is not a Unix time in whole seconds.',
            );
        }
        $age = ($now ?? time()) - (int) $timestamp;
        if (abs($age) > $this->tolerance) {
            $when = $age > 0 ? "{$age} s in the past" : (-$age) . ' s in the future';
            throw new Failure(
                Failure::TIMESTAMP_OUTSIDE_TOLERANCE,
                "The webhook-timestamp is {$when}, outside the {$this->tolerance} s tolerance. "
                . "Check that this machine's clock is right (NTP).",
            );
        }

        $signed = $values['webhook-id'] . '.' . $timestamp . '.' . $payload;
        $candidates = self::parseSignatures($values['webhook-signature']);
        $matched = false;
        // Every pair is compared (hash_equals is constant-time), with no early exit.
        foreach ($this->keys as $key) {
            $expected = hash_hmac('sha256', $signed, $key, true);
            foreach ($candidates as $candidate) {
                $matched = hash_equals($expected, $candidate) || $matched;
            }
        }
        if (!$matched) {
            $found = $candidates === []
                ? 'webhook-signature holds no v1 signature'
                : 'none of the ' . count($candidates) . ' v1 signature(s) matches this body';
            throw new Failure(
                Failure::NO_VALID_SIGNATURE,
                "No valid signature: {$found}. Check that the secret is this endpoint's signing secret "
                . '(during a rotation pass both the new and the old one) and that the body is the raw '
                . "request body (file_get_contents('php://input')), not decoded and re-encoded JSON.",
            );
        }
    }

    /**
     * The Standard Webhooks headers for `$payload`, signed with every secret (space-separated).
     * For tests of your handler: send `$payload` byte for byte as signed.
     *
     * @return array{webhook-id: string, webhook-timestamp: string, webhook-signature: string}
     */
    public function sign(string $payload, ?string $id = null, ?int $timestamp = null): array
    {
        $id ??= 'msg_' . bin2hex(random_bytes(13));
        $timestamp ??= time();
        $signatures = [];
        foreach ($this->keys as $key) {
            $signatures[] = 'v1,' . base64_encode(hash_hmac('sha256', "{$id}.{$timestamp}.{$payload}", $key, true));
        }
        return [
            'webhook-id' => $id,
            'webhook-timestamp' => (string) $timestamp,
            'webhook-signature' => implode(' ', $signatures),
        ];
    }

    /**
     * Header names in lower case, `$_SERVER`'s `HTTP_WEBHOOK_ID` as `webhook-id`; repeated
     * signature headers joined with spaces, other repeated headers' first value kept.
     *
     * @param array<array-key, mixed> $headers
     * @return array<string, string>
     */
    public static function normalizeHeaders(array $headers): array
    {
        $out = [];
        foreach ($headers as $name => $value) {
            $name = strtolower((string) $name);
            if (str_starts_with($name, 'http_')) {
                $name = str_replace('_', '-', substr($name, 5));
            }
            $list = array_values(array_filter(is_array($value) ? $value : [$value], 'is_string'));
            if ($list === []) {
                continue;
            }
            if ($name === 'webhook-signature') {
                $out[$name] = trim(($out[$name] ?? '') . ' ' . implode(' ', $list));
            } else {
                $out[$name] ??= $list[0];
            }
        }
        return $out;
    }

    /** @return list<string> the decoded `v1` signatures; other versions (`v1a`) are skipped, as the spec says */
    private static function parseSignatures(string $header): array
    {
        $signatures = [];
        foreach (preg_split('/\s+/', $header) ?: [] as $token) {
            // Joined repeated headers can put "," between entries; base64 has no commas.
            $parts = explode(',', rtrim($token, ','), 2);
            if (count($parts) !== 2 || $parts[0] !== 'v1') {
                continue;
            }
            $bytes = self::decodeBase64($parts[1]);
            if ($bytes !== null) {
                $signatures[] = $bytes;
            }
        }
        return $signatures;
    }

    /** Standard base64, padding optional; null when it is not base64. */
    private static function decodeBase64(string $value): ?string
    {
        if (preg_match('#^[A-Za-z0-9+/]*={0,2}$#', $value) !== 1 || strlen(rtrim($value, '=')) % 4 === 1) {
            return null;
        }
        $padded = rtrim($value, '=');
        $padded .= str_repeat('=', (4 - strlen($padded) % 4) % 4);
        $bytes = base64_decode($padded, true);
        return $bytes === false ? null : $bytes;
    }

    /** @throws Failure */
    private static function parseEvent(string $payload): EventInterface
    {
        try {
            $data = json_decode($payload, true, 512, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
        } catch (\JsonException $e) {
            throw new Failure(
                Failure::INVALID_PAYLOAD,
                "The webhook body is signed but is not JSON ({$e->getMessage()}), so not an event.",
            );
        }
        if (!is_array($data) || array_is_list($data) || !is_string($data['type'] ?? null)) {
            throw new Failure(
                Failure::INVALID_PAYLOAD,
                'The webhook payload is signed but is not an event: it has no string "type".',
            );
        }
        /** @var array<string, mixed> $data */
        return Event::fromArray($data);
    }
}
