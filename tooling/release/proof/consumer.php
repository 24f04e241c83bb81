<?php

/**
 * The PHP consumer of the release proof: run in a fresh Composer project holding only the
 * released archive. Creates and lists students against the live server, reads the raw
 * response's headers, and verifies a webhook the server's own signer signed.
 */

declare(strict_types=1);

require __DIR__ . '/vendor/autoload.php';

use PlatformApi\ClientOptions;
use PlatformApi\Exception\WebhookVerificationException;
use PlatformApi\PlatformClient;
use PlatformApi\Webhook\Webhook;

// Closures, not functions: a script (PSR-1) declares no symbols.
$env = static function (string $name): string {
    $value = getenv($name);
    if ($value === false || $value === '') {
        fwrite(STDERR, "{$name} is not set (the release proof sets it)\n");
        exit(1);
    }
    return $value;
};
$check = static function (bool $condition, string $message): void {
    if (!$condition) {
        fwrite(STDERR, "check failed: {$message}\n");
        exit(1);
    }
};

$version = $env('PROOF_VERSION');
$file = (string) (new ReflectionClass(PlatformClient::class))->getFileName();
$check(
    str_starts_with($file, __DIR__ . '/vendor/platform/platform-api/'),
    "PlatformClient comes from {$file}, not this project's vendor/",
);
$check(PlatformClient::VERSION === $version, 'VERSION is ' . PlatformClient::VERSION . ", not {$version}");

$client = new PlatformClient(
    token: $env('PLATFORM_TOKEN'),
    baseUrl: $env('PLATFORM_BASE_URL'),
    options: new ClientOptions(maxRetries: 0),
);
$number = 'PROOF-php-' . dechex((int) (microtime(true) * 1000));
$raw = $client->students->raw->create([
    'student_number' => $number,
    'first_name' => 'Ada',
    'last_name' => 'Lovelace',
]);
$student = $raw->parse();
$check($raw->statusCode === 201, "create answered {$raw->statusCode}, not 201");
$check(str_starts_with($student->id, 'stu_'), "the new student's id is {$student->id}");
$check($raw->requestId !== null && $raw->requestId !== '', 'the raw response has no request id');
$check($raw->header('X-Request-Id') === $raw->requestId, 'X-Request-Id differs from requestId');
$serverVersion = $raw->header('Platform-Version');
$check($serverVersion === $version, "Platform-Version is {$serverVersion}, not {$version}");

$page = $client->students->list(['per_page' => 100, 'q' => $number]);
$found = false;
foreach ($page->data as $s) {
    $found = $found || $s->id === $student->id;
}
$check($found, 'the new student is not in the list');

$body = (string) base64_decode($env('PROOF_WEBHOOK_BODY_B64'), true);
/** @var array<string, string> $headers */
$headers = json_decode($env('PROOF_WEBHOOK_HEADERS'), true, flags: JSON_THROW_ON_ERROR);
$webhook = new Webhook($env('PROOF_WEBHOOK_SECRET'));
$event = $webhook->verify($body, $headers);
$check($event->type === 'student.created', "event type {$event->type}");
$check($event->data->id === $env('PROOF_WEBHOOK_STUDENT_ID'), 'the event is about another student');
$tampered = str_replace('"Ana"', '"Eve"', $body);
$check($tampered !== $body, 'the payload has no "Ana" to tamper with');
try {
    $webhook->verify($tampered, $headers);
    $check(false, 'a tampered body was accepted');
} catch (WebhookVerificationException $e) {
    $check($e->reason === 'no_valid_signature', "reason {$e->reason}, not no_valid_signature");
}

echo "ok php: created {$student->id} (request {$raw->requestId}, server {$serverVersion}), "
    . 'listed ' . count($page->data) . ", webhook verified\n";
