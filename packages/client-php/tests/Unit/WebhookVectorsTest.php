<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Unit;

use PHPUnit\Framework\TestCase;
use PlatformApi\Exception\WebhookVerificationException;
use PlatformApi\Model\UnknownEvent;
use PlatformApi\Webhook\Webhook;

/**
 * The shared vectors (conformance/webhooks/vectors.json, signed by the server's own signer) that
 * the TypeScript, PHP and Python verifiers must all agree on.
 */
final class WebhookVectorsTest extends TestCase
{
    public static function vectorsFile(): string
    {
        // PLATFORM_WEBHOOK_VECTORS points elsewhere for a checkout that lacks the file.
        $override = getenv('PLATFORM_WEBHOOK_VECTORS');
        return is_string(
            $override,
        ) && $override !== '' ? $override : dirname(__DIR__, 4) . '/conformance/webhooks/vectors.json';
    }

    /** @return iterable<string, array{array<string, mixed>}> */
    public static function cases(): iterable
    {
        $file = self::vectorsFile();
        $json = is_file($file) ? file_get_contents($file) : false;
        if ($json === false) {
            // A data provider cannot fail a test; this case does, naming the missing file.
            yield 'vectors file missing' => [['missing' => $file]];
            return;
        }
        $vectors = json_decode($json, true, 512, JSON_THROW_ON_ERROR);
        foreach ($vectors['cases'] as $case) {
            yield $case['name'] => [$case];
        }
    }

    /**
     * @dataProvider cases
     * @param array<string, mixed> $case
     */
    public function testVector(array $case): void
    {
        self::assertArrayNotHasKey(
            'missing',
            $case,
            'conformance/webhooks/vectors.json is missing: ' . ($case['missing'] ?? ''),
        );
        $body = base64_decode($case['body_b64'], true);
        self::assertIsString($body);
        $outcome = 'ok';
        $event = null;
        try {
            $webhook = new Webhook($case['secrets'], $case['tolerance']);
            $webhook->verifySignature($body, $case['headers'], $case['now']);
            $event = $webhook->verify($body, $case['headers'], $case['now']);
        } catch (WebhookVerificationException $e) {
            $outcome = $e->reason;
        }
        if ($case['expect'] === 'ok' && !isset($case['event_type'])) {
            // A body that is no Platform event: the signature verified (verifySignature passed), and
            // parsing it as an event may only report invalid_payload.
            self::assertContains($outcome, ['ok', WebhookVerificationException::INVALID_PAYLOAD], $case['description']);
            return;
        }
        self::assertSame($case['expect'], $outcome, $case['description']);
        if (isset($case['event_type'])) {
            self::assertNotNull($event);
            self::assertNotInstanceOf(UnknownEvent::class, $event, 'a known event type comes back typed');
            self::assertSame($case['event_type'], $event->eventType());
            self::assertSame(json_decode($body, true), $event->toArray());
        }
    }

    public function testTheVectorsCoverEveryReason(): void
    {
        $file = self::vectorsFile();
        self::assertFileExists($file);
        $vectors = json_decode((string) file_get_contents($file), true, 512, JSON_THROW_ON_ERROR);
        $reasons = array_unique(array_column($vectors['cases'], 'expect'));
        sort($reasons);
        self::assertSame(
            [
                'invalid_secret',
                'invalid_timestamp',
                'missing_header',
                'no_valid_signature',
                'ok',
                'timestamp_outside_tolerance',
            ],
            $reasons,
        );
    }
}
