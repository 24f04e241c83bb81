<?php

declare(strict_types=1);

namespace PlatformApi\Exception;

/**
 * A webhook delivery failed verification. `reason` says why (the same strings as the other SDKs):
 * `missing_header`, `invalid_timestamp`, `timestamp_outside_tolerance`, `no_valid_signature`,
 * `invalid_secret`, `invalid_payload`; the message says what to fix.
 */
class WebhookVerificationException extends PlatformException
{
    public const MISSING_HEADER = 'missing_header';
    public const INVALID_TIMESTAMP = 'invalid_timestamp';
    public const TIMESTAMP_OUTSIDE_TOLERANCE = 'timestamp_outside_tolerance';
    public const NO_VALID_SIGNATURE = 'no_valid_signature';
    public const INVALID_SECRET = 'invalid_secret';
    public const INVALID_PAYLOAD = 'invalid_payload';

    public function __construct(public readonly string $reason, string $message)
    {
        parent::__construct($message);
    }
}
