<?php

/*
 * A webhook endpoint in plain PHP: put it behind your web server (PHP-FPM) at the URL you
 * registered, or try it with `php -S 127.0.0.1:8080 webhook-receiver.php`.
 * PLATFORM_WEBHOOK_SECRET holds the endpoint's secret; during a rotation "new,old".
 */

declare(strict_types=1);

require __DIR__ . '/../vendor/autoload.php'; // your project's vendor/autoload.php

use PlatformApi\Exception\WebhookVerificationException;
use PlatformApi\Model\EnrollmentCompletedEvent;
use PlatformApi\Model\PaymentRefundedEvent;
use PlatformApi\Model\StudentCreatedEvent;
use PlatformApi\Model\UnknownEvent;
use PlatformApi\Webhook\Webhook;

$webhook = new Webhook(explode(',', (string) getenv('PLATFORM_WEBHOOK_SECRET')));
try {
    // The raw body, exactly as received: never json_decode() and re-encode it first.
    $event = $webhook->verify((string) file_get_contents('php://input'), getallheaders());
} catch (WebhookVerificationException $e) {
    error_log("Refused a webhook: {$e->reason}: {$e->getMessage()}");
    http_response_code(400);
    return;
}

// Deliveries are at least once: skip an event you already handled (its id is the same every time).
if ($event instanceof StudentCreatedEvent) {
    error_log("New student {$event->data->id}: {$event->data->firstName} {$event->data->lastName}");
} elseif ($event instanceof PaymentRefundedEvent) {
    error_log("Payment {$event->data->id} refunded: {$event->data->amountRefunded} {$event->data->currency}");
} elseif ($event instanceof EnrollmentCompletedEvent) {
    error_log("Student {$event->data->studentId} completed course {$event->data->courseId}");
} elseif ($event instanceof UnknownEvent) {
    error_log("An event type this SDK does not know yet: {$event->type}");
}
http_response_code(204); // answer 2xx quickly, or the delivery is retried
