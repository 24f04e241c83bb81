<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Unit;

use PHPUnit\Framework\TestCase;
use PlatformApi\Tests\Support\Readme;
use PlatformApi\Tests\Support\ScriptedServer;
use PlatformApi\Webhook\Webhook;

/** The README's webhook endpoint is examples/webhook-receiver.php, and it works as served by PHP. */
final class ExamplesTest extends TestCase
{
    private const EXAMPLE = __DIR__ . '/../../examples/webhook-receiver.php';

    public function testTheReadmeShowsTheExampleVerbatim(): void
    {
        self::assertSame(
            file_get_contents(self::EXAMPLE),
            Readme::blockAfter('include: examples/webhook-receiver.php'),
        );
    }

    public function testTheWebhookReceiverAcceptsSignedDeliveriesAndRefusesOthers(): void
    {
        $old = 'whsec_' . base64_encode(random_bytes(24));
        $new = 'whsec_' . base64_encode(random_bytes(24));
        $port = ScriptedServer::freePort();
        $log = tempnam(sys_get_temp_dir(), 'receiver-log-');
        $process = proc_open(
            [PHP_BINARY, '-d', "error_log={$log}", '-S', "127.0.0.1:{$port}", self::EXAMPLE],
            [0 => ['pipe', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']],
            $pipes,
            null,
            ['PLATFORM_WEBHOOK_SECRET' => "{$new},{$old}"] + getenv(),
        );
        self::assertIsResource($process);
        try {
            ScriptedServer::waitForPort($port);
            $body = json_encode([
                'id' => 'evt_1', 'object' => 'event', 'type' => 'student.created',
                'timestamp' => '2026-01-01T00:00:00.000Z',
                'api_version' => 'v1', 'data' => [
                    'id' => 'stu_1',
                    'object' => 'student',
                    'first_name' => 'Zoë',
                    'last_name' => 'Ng',
                ],
            ], JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);
            $signedByOld = (new Webhook($old))->sign($body);

            self::assertSame(204, self::post($port, $body, $signedByOld));
            self::assertSame(400, self::post($port, $body . ' ', $signedByOld));
            self::assertSame(400, self::post($port, $body, []));
            self::assertStringContainsString('New student stu_1: Zoë Ng', (string) file_get_contents($log));
            self::assertStringContainsString('Refused a webhook: no_valid_signature', (string) file_get_contents($log));
            self::assertStringContainsString('Refused a webhook: missing_header', (string) file_get_contents($log));
        } finally {
            proc_terminate($process);
            proc_close($process);
            unlink($log);
        }
    }

    /** @param array<string, string> $headers */
    private static function post(int $port, string $body, array $headers): int
    {
        $curl = curl_init("http://127.0.0.1:{$port}/hooks");
        $lines = ['Content-Type: application/json'];
        foreach ($headers as $name => $value) {
            $lines[] = ucwords($name, '-') . ": {$value}";
        }
        curl_setopt_array($curl, [
            CURLOPT_POST => true,
            CURLOPT_POSTFIELDS => $body,
            CURLOPT_HTTPHEADER => $lines,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_TIMEOUT => 10,
        ]);
        curl_exec($curl);
        return (int) curl_getinfo($curl, CURLINFO_RESPONSE_CODE);
    }
}
