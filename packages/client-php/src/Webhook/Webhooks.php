<?php

declare(strict_types=1);

namespace PlatformApi\Webhook;

/** `$client->webhooks`: verify deliveries without building a Webhook yourself. */
final class Webhooks
{
    /**
     * Verifies a delivery and returns its typed event (see Webhook::verify()).
     *
     * @param array<string, string|list<string>> $headers
     * @param string|list<string> $secret
     * @throws \PlatformApi\Exception\WebhookVerificationException
     */
    public function unwrap(
        string $payload,
        array $headers,
        #[\SensitiveParameter] string|array $secret,
        int $tolerance = Webhook::DEFAULT_TOLERANCE,
        ?int $now = null,
    ): EventInterface {
        return (new Webhook($secret, $tolerance))->verify($payload, $headers, $now);
    }
}
