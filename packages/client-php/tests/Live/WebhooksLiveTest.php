<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PlatformApi\Model\PingEvent;
use PlatformApi\Model\StudentCreatedEvent;
use PlatformApi\Model\WebhookDelivery;
use PlatformApi\Model\WebhookEndpoint;
use PlatformApi\Tests\Support\ScriptedServer;
use PlatformApi\Webhook\Webhook;

/** Real deliveries from the server to a receiver on 127.0.0.1, verified with the SDK. */
final class WebhooksLiveTest extends LiveTestCase
{
    private ScriptedServer $receiver;

    protected function setUp(): void
    {
        $this->receiver = new ScriptedServer();
        $this->receiver->script(...array_fill(0, 40, ['status' => 204]));
    }

    protected function tearDown(): void
    {
        $this->receiver->stop();
    }

    /**
     * Waits for a delivery whose body contains `$needle`.
     *
     * @return array{method: string, uri: string, headers: array<string, string>, body: string}
     */
    private function awaitDelivery(string $needle, int $nth = 1, float $seconds = 20.0): array
    {
        $deadline = microtime(true) + $seconds;
        do {
            $matches = array_values(array_filter(
                $this->receiver->requests(),
                static fn ($r) => str_contains($r['body'], $needle),
            ));
            if (count($matches) >= $nth) {
                return $matches[$nth - 1];
            }
            usleep(100_000);
        } while (microtime(true) < $deadline);
        self::fail("no delivery #{$nth} containing {$needle} within {$seconds} s");
    }

    public function testALiveDeliveryVerifiesAndTheEndpointOperationsWork(): void
    {
        $client = self::client();
        $endpoint = $client->webhookEndpoints->create([
            'url' => $this->receiver->url . '/hooks',
            'events' => ['student.created'],
            'description' => 'php sdk live test',
        ]);
        self::assertStringStartsWith('whsec_', $endpoint->secret);
        self::assertSame(['student.created'], $endpoint->events);

        $student = self::newStudent($client);
        $delivery = $this->awaitDelivery($student->id);
        self::assertSame('POST', $delivery['method']);
        self::assertSame('/hooks', $delivery['uri']);
        $event = $client->webhooks->unwrap($delivery['body'], $delivery['headers'], secret: $endpoint->secret);
        self::assertInstanceOf(StudentCreatedEvent::class, $event);
        self::assertSame($student->id, $event->data->id);
        self::assertSame($student->studentNumber, $event->data->studentNumber);

        // Endpoint reads and changes.
        self::assertInstanceOf(WebhookEndpoint::class, $client->webhookEndpoints->retrieve($endpoint->id));
        self::assertContains(
            $endpoint->id,
            array_map(
                static fn ($e) => $e->id,
                iterator_to_array($client->webhookEndpoints->list(['enabled' => true])),
            ),
        );
        $updated = $client->webhookEndpoints->update(
            $endpoint->id,
            ['description' => null, 'events' => ['student.created', 'student.updated']],
        );
        self::assertNull($updated->description);
        self::assertSame(['student.created', 'student.updated'], $updated->events);

        // A ping, through the test operation.
        $ping = $client->webhookEndpoints->test($endpoint->id);
        self::assertInstanceOf(WebhookDelivery::class, $ping);
        $pinged = $this->awaitDelivery('"type":"ping"');
        self::assertInstanceOf(
            PingEvent::class,
            (new Webhook($endpoint->secret))->verify($pinged['body'], $pinged['headers']),
        );

        // Deliveries: listed per endpoint, retrieved, and retried with the same webhook-id.
        $deliveries = iterator_to_array(
            $client->webhookEndpoints->deliveries($endpoint->id, ['event_type' => 'student.created']),
        );
        self::assertCount(1, $deliveries);
        $stored = $client->webhookDeliveries->retrieve($deliveries[0]->id);
        self::assertSame('student.created', $stored->eventType);
        $client->webhookDeliveries->retry($stored->id);
        $again = $this->awaitDelivery($student->id, 2);
        self::assertSame($delivery['headers']['webhook-id'], $again['headers']['webhook-id']);

        // A rotation: deliveries carry a signature per secret for 24 h, so both verify.
        $rotated = $client->webhookEndpoints->rotateSecret($endpoint->id);
        self::assertNotSame($endpoint->secret, $rotated->secret);
        $next = self::newStudent($client);
        $rotatedDelivery = $this->awaitDelivery($next->id);
        foreach ([$rotated->secret, $endpoint->secret] as $secret) {
            $event = (new Webhook($secret))->verify($rotatedDelivery['body'], $rotatedDelivery['headers']);
            self::assertInstanceOf(StudentCreatedEvent::class, $event);
        }

        self::assertTrue($client->webhookEndpoints->delete($endpoint->id)->deleted);
    }

    public function testEventsAreListedAndRetrievedTyped(): void
    {
        $client = self::client();
        $student = self::newStudent($client);
        $found = null;
        foreach ($client->events->list(['type' => 'student.created', 'per_page' => 100]) as $event) {
            self::assertInstanceOf(StudentCreatedEvent::class, $event);
            if ($event->data->id === $student->id) {
                $found = $event;
                break;
            }
        }
        self::assertNotNull($found, 'the student.created event of the new student is listed');
        $retrieved = $client->events->retrieve($found->id);
        self::assertInstanceOf(StudentCreatedEvent::class, $retrieved);
        self::assertSame($found->toArray(), $retrieved->toArray());
    }
}
