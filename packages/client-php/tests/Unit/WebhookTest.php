<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Unit;

use PHPUnit\Framework\TestCase;
use PlatformApi\Exception\WebhookVerificationException;
use PlatformApi\Model\PaymentRefundedEvent;
use PlatformApi\Model\Student;
use PlatformApi\Model\StudentCreatedEvent;
use PlatformApi\Model\UnknownEvent;
use PlatformApi\PlatformClient;
use PlatformApi\Webhook\Webhook;

/** The verifier's behaviour beyond the shared vectors: header forms, rotation, typed events, hostile input. */
final class WebhookTest extends TestCase
{
    private const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    private const NOW = 1_767_225_600;

    private static function event(string $type = 'student.created'): string
    {
        return json_encode([
            'id' => 'evt_1', 'object' => 'event', 'type' => $type, 'timestamp' => '2026-01-01T00:00:00.000Z',
            'api_version' => 'v1',
            'data' => [
                'id' => 'stu_1',
                'object' => 'student',
                'first_name' => 'Zoë',
                'status' => 'active',
                'amount_refunded' => 500,
            ],
        ], JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);
    }

    private static function reason(callable $verify): string
    {
        try {
            $verify();
        } catch (WebhookVerificationException $e) {
            return $e->reason;
        }
        return 'ok';
    }

    public function testTheStandardWebhooksSpecVector(): void
    {
        $webhook = new Webhook(self::SECRET);
        $headers = [
            'webhook-id' => 'msg_p5jXN8AQM9LWM0D4loKWxJek',
            'webhook-timestamp' => '1614265330',
            'webhook-signature' => 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
        ];
        $webhook->verifySignature('{"test": 2432232314}', $headers, 1614265330);
        self::assertSame($headers, $webhook->sign('{"test": 2432232314}', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330));
        self::assertSame(
            'invalid_payload',
            self::reason(fn () => $webhook->verify('{"test": 2432232314}', $headers, 1614265330)),
        );
    }

    public function testAVerifiedEventComesBackTyped(): void
    {
        $webhook = new Webhook(self::SECRET);
        $body = self::event();
        $event = $webhook->verify($body, $webhook->sign($body, 'msg_1', self::NOW), self::NOW);
        self::assertInstanceOf(StudentCreatedEvent::class, $event);
        self::assertInstanceOf(Student::class, $event->data);
        self::assertSame('Zoë', $event->data->firstName);

        $refund = self::event('payment.refunded');
        $event = $webhook->verify($refund, $webhook->sign($refund, 'msg_2', self::NOW), self::NOW);
        self::assertInstanceOf(PaymentRefundedEvent::class, $event);
        self::assertSame(500, $event->data->amountRefunded);
    }

    public function testAnUnknownEventTypeIsReturnedNotThrown(): void
    {
        $webhook = new Webhook(self::SECRET);
        $body = self::event('student.teleported');
        $event = $webhook->verify($body, $webhook->sign($body, 'msg_1', self::NOW), self::NOW);
        self::assertInstanceOf(UnknownEvent::class, $event);
        self::assertSame('student.teleported', $event->type);
        self::assertSame('stu_1', $event->data['id']);
    }

    public function testHeadersInEveryFormPhpGivesThem(): void
    {
        $webhook = new Webhook(self::SECRET);
        $body = self::event();
        $signed = $webhook->sign($body, 'msg_1', self::NOW);
        $forms = [
            'getallheaders()' => [
                'Webhook-Id' => $signed['webhook-id'],
                'Webhook-Timestamp' => $signed['webhook-timestamp'],
                'Webhook-Signature' => $signed['webhook-signature'],
                'Content-Type' => 'application/json',
            ],
            '$_SERVER' => [
                'HTTP_WEBHOOK_ID' => $signed['webhook-id'],
                'HTTP_WEBHOOK_TIMESTAMP' => $signed['webhook-timestamp'],
                'HTTP_WEBHOOK_SIGNATURE' => $signed['webhook-signature'],
                'REQUEST_METHOD' => 'POST',
                'argv' => ['x'],
            ],
            'PSR-7 getHeaders()' => [
                'webhook-id' => [$signed['webhook-id']],
                'webhook-timestamp' => [$signed['webhook-timestamp']],
                'webhook-signature' => ['v1a,AAAA', $signed['webhook-signature']],
            ],
        ];
        foreach ($forms as $form => $headers) {
            self::assertSame('ok', self::reason(fn () => $webhook->verify($body, $headers, self::NOW)), $form);
        }
    }

    public function testDuringARotationEitherSecretVerifies(): void
    {
        $old = new Webhook(self::SECRET);
        $new = 'whsec_' . base64_encode(random_bytes(24));
        $body = self::event();
        $signedByOld = $old->sign($body, 'msg_1', self::NOW);
        self::assertSame(
            'no_valid_signature',
            self::reason(fn () => (new Webhook($new))->verify($body, $signedByOld, self::NOW)),
        );
        self::assertSame(
            'ok',
            self::reason(fn () => (new Webhook([$new, self::SECRET]))->verify($body, $signedByOld, self::NOW)),
        );
        // The server signs with both during a rotation: one header, two signatures.
        $both = (new Webhook([$new, self::SECRET]))->sign($body, 'msg_1', self::NOW);
        self::assertCount(2, explode(' ', $both['webhook-signature']));
        self::assertSame('ok', self::reason(fn () => (new Webhook($new))->verify($body, $both, self::NOW)));
    }

    public function testTheTimestampWindowIsPlusMinus300Seconds(): void
    {
        $webhook = new Webhook(self::SECRET);
        $body = self::event();
        $headers = $webhook->sign($body, 'msg_1', self::NOW);
        self::assertSame('ok', self::reason(fn () => $webhook->verify($body, $headers, self::NOW + 300)));
        self::assertSame('ok', self::reason(fn () => $webhook->verify($body, $headers, self::NOW - 300)));
        self::assertSame(
            'timestamp_outside_tolerance',
            self::reason(fn () => $webhook->verify($body, $headers, self::NOW + 301)),
        );
        self::assertSame(
            'timestamp_outside_tolerance',
            self::reason(fn () => $webhook->verify($body, $headers, self::NOW - 301)),
        );
        self::assertSame(
            'ok',
            self::reason(fn () => (new Webhook(self::SECRET, 1000))->verify($body, $headers, self::NOW + 900)),
        );
    }

    public function testMalformedHeadersAreVerificationErrorsNeverCrashes(): void
    {
        $webhook = new Webhook(self::SECRET);
        $body = self::event();
        $good = $webhook->sign($body, 'msg_1', self::NOW);
        $signatures = [
            'v1',
            'v1,',
            'v1,!!!',
            ',,,',
            'v2,abc',
            'v1,' . str_repeat('A', 10000),
            "v1,\0",
            '   ',
            'v1,abc=def',
            'v1,==',
        ];
        foreach ($signatures as $signature) {
            $headers = ['webhook-signature' => $signature] + $good;
            $reason = self::reason(fn () => $webhook->verify($body, $headers, self::NOW));
            self::assertContains($reason, ['no_valid_signature', 'missing_header'], json_encode($signature) ?: '');
        }
        foreach (['abc', '1e9', '-1', '1767225600.5', '', ' '] as $ts) {
            $reason = self::reason(fn () => $webhook->verify($body, ['webhook-timestamp' => $ts] + $good, self::NOW));
            self::assertContains($reason, ['invalid_timestamp', 'missing_header'], $ts);
        }
        // Values of the wrong kind (a PSR-7 list of nothing, a number) count as absent.
        self::assertSame(
            'missing_header',
            self::reason(fn () => $webhook->verify($body, ['webhook-id' => []] + $good, self::NOW)),
        );
        self::assertSame('missing_header', self::reason(fn () => $webhook->verify($body, [], self::NOW)));
    }

    public function testTheBodyMustBeTheRawBytes(): void
    {
        $webhook = new Webhook(self::SECRET);
        $body = self::event();
        $headers = $webhook->sign($body, 'msg_1', self::NOW);
        $reencoded = json_encode(json_decode($body, true)); // escapes ë: not the bytes that were signed
        self::assertNotSame($body, $reencoded);
        self::assertSame(
            'no_valid_signature',
            self::reason(fn () => $webhook->verify((string) $reencoded, $headers, self::NOW)),
        );
        self::assertSame(
            'no_valid_signature',
            self::reason(fn () => $webhook->verify($body . "\n", $headers, self::NOW)),
        );
        self::assertSame(
            'no_valid_signature',
            self::reason(fn () => $webhook->verify($body, ['webhook-id' => 'msg_2'] + $headers, self::NOW)),
        );
    }

    public function testSecretsMustBeWhsecBase64(): void
    {
        foreach (['', 'whsec_', 'whsec_***', 'pat_abc', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] as $secret) {
            self::assertSame('invalid_secret', self::reason(fn () => new Webhook($secret)), $secret);
        }
        self::assertSame('invalid_secret', self::reason(fn () => new Webhook([])));
        // Unpadded base64 is the same key.
        self::assertSame(
            (new Webhook('whsec_' . base64_encode('0123456789abcdef0')))->sign('x', 'm', 1),
            (new Webhook('whsec_' . rtrim(base64_encode('0123456789abcdef0'), '=')))->sign('x', 'm', 1),
        );
    }

    public function testASignedBodyThatIsNoEventIsAnInvalidPayload(): void
    {
        $webhook = new Webhook(self::SECRET);
        foreach (['not json', '[1,2]', '{"type": 5}', "\xB1"] as $body) {
            $reason = self::reason(
                fn () => $webhook->verify($body, $webhook->sign($body, 'msg_1', self::NOW), self::NOW),
            );
            self::assertSame('invalid_payload', $reason, $body);
        }
    }

    public function testTheClientsUnwrap(): void
    {
        $client = new PlatformClient(token: 'pat_x', baseUrl: 'https://api.school.test');
        $body = self::event();
        $headers = (new Webhook(self::SECRET))->sign($body);
        self::assertInstanceOf(
            StudentCreatedEvent::class,
            $client->webhooks->unwrap($body, $headers, secret: self::SECRET),
        );
    }
}
