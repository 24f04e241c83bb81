<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PlatformApi\Core\Cursor;
use PlatformApi\Core\FeedFollower;
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
        // A listed event carries its feed cursor: the number before the dot is its position, and
        // reading the feed up to it ends with this event.
        self::assertIsString($found->cursor);
        self::assertMatchesRegularExpression(Cursor::PATTERN, $found->cursor);
        self::assertSame((string) $found->position, explode('.', $found->cursor)[0]);
        $upTo = $client->changes->follow(
            ['after' => 0, 'until' => $found->cursor, 'type' => 'student.created', 'limit' => 1000,
                'until_caught_up' => true],
        );
        $last = null;
        foreach ($upTo as $change) {
            $last = $change;
        }
        self::assertSame($found->toArray(), $last?->toArray());
        self::assertSame($found->cursor, $upTo->cursor);
    }

    public function testADeliveryCarriesItsCursorAndTheGapRecipeReadsWhatWasMissed(): void
    {
        $client = self::client();
        $endpoint = $client->webhookEndpoints->create([
            'url' => $this->receiver->url . '/gaps',
            'events' => ['student.created'],
            'description' => 'php sdk live test: gaps',
        ]);
        $unwrap = fn (array $delivery): StudentCreatedEvent => $client->webhooks->unwrap(
            $delivery['body'],
            $delivery['headers'],
            secret: $endpoint->secret,
        );
        $applied = $unwrap($this->awaitDelivery(self::newStudent($client)->id));
        // Two deliveries this receiver "misses" (it ignores them), then the one it sees.
        $missed = [self::newStudent($client)->id, self::newStudent($client)->id];
        $last = self::newStudent($client);
        $event = $unwrap($this->awaitDelivery($last->id));

        self::assertIsString($applied->cursor);
        self::assertIsString($event->cursor);
        self::assertMatchesRegularExpression(Cursor::PATTERN, $event->cursor);
        self::assertSame((string) $event->position, explode('.', $event->cursor)[0]);
        // The gap: previous_position is not the position of the last change applied.
        self::assertNotNull($event->previousPosition);
        self::assertNotSame($applied->position, $event->previousPosition);

        // The recipe: the feed after the last applied change's cursor, until this delivery's cursor.
        $reads = 0;
        $follower = new FeedFollower(
            function (array $query, ?\PlatformApi\RequestOptions $options) use ($client, &$reads) {
                self::assertLessThan(10, ++$reads, 'the follower did not stop at until');
                return $client->changes->list($query, $options);
            },
            ['after' => $applied->cursor, 'until' => $event->cursor, 'type' => 'student.created'],
        );
        $read = [];
        foreach ($follower as $change) {
            $read[] = $change->toArray();
        }
        self::assertSame([...$missed, $last->id], array_map(static fn ($c) => $c['data']['id'] ?? null, $read));
        self::assertSame($event->previousPosition, $read[1]['position']);
        self::assertSame($event->cursor, $read[2]['cursor']);
        self::assertSame($event->cursor, $follower->cursor);

        self::assertTrue($client->webhookEndpoints->delete($endpoint->id)->deleted);
    }
}
