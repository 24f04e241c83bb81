<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PlatformApi\Model\RequestLog;
use PlatformApi\Tests\Support\ScriptedServer;

/**
 * What a developer debugs an integration with, against the real server: an endpoint's 24-hour
 * stats, replaying its failed deliveries, the request log and the usage per hour.
 */
final class ObservabilityLiveTest extends LiveTestCase
{
    public function testStatsAndReplayOfAnEndpointThatFailed(): void
    {
        $receiver = new ScriptedServer();
        // The first attempt and its three retries (the live server retries after 1 s, 2 s and
        // 5 s) fail, so the delivery ends failed; after the replay the receiver answers 204.
        $receiver->script(...array_fill(0, 4, ['status' => 500]));
        try {
            $client = self::client();
            $since = new \DateTimeImmutable('-1 minute');
            $endpoint = $client->webhookEndpoints->create([
                'url' => $receiver->url . '/hooks',
                'events' => ['student.created'],
            ]);
            $student = self::newStudent($client);
            $deadline = microtime(true) + 30;
            do {
                $statuses = array_map(
                    static fn ($d) => $d->status,
                    iterator_to_array($client->webhookEndpoints->deliveries($endpoint->id)),
                );
                if ($statuses === ['failed']) {
                    break;
                }
                usleep(200_000);
            } while (microtime(true) < $deadline);
            self::assertSame(['failed'], $statuses);
            $stats = $client->webhookEndpoints->stats($endpoint->id);
            self::assertSame($endpoint->id, $stats->endpointId);
            self::assertSame(4, $stats->failed);
            self::assertSame(0, $stats->succeeded);
            self::assertEquals(0.0, $stats->successRate);

            $receiver->script(...array_fill(0, 5, ['status' => 204]));
            $replay = $client->webhookEndpoints->replayFailed($endpoint->id, [
                'since' => $since->format(\DATE_RFC3339_EXTENDED),
            ]);
            self::assertSame('webhook_replay', $replay->object);
            self::assertSame(1, $replay->queued);
            $deadline = microtime(true) + 20;
            do {
                $delivered = array_filter(
                    $receiver->requests(),
                    static fn ($r) => str_contains($r['body'], $student->id),
                );
                usleep(100_000);
            } while (count($delivered) < 5 && microtime(true) < $deadline);
            self::assertCount(5, $delivered);
            $client->webhookEndpoints->delete($endpoint->id);
        } finally {
            $receiver->stop();
        }
    }

    public function testTheRequestLogAndUsageShowTheCallsJustMade(): void
    {
        $client = self::client();
        $student = self::newStudent($client);
        $client->students->retrieve($student->id);
        // Entries are written in batches about a second after their response.
        $deadline = microtime(true) + 10;
        $found = null;
        do {
            // The suite's other tests read students too, some to a 404 (ExternalIdsLiveTest).
            $logs = $client->requestLogs->list(['route' => '/v1/students/:id', 'method' => 'GET', 'status' => 200]);
            foreach ($logs as $entry) {
                $found = $entry;
                break;
            }
            if ($found === null) {
                usleep(200_000);
            }
        } while ($found === null && microtime(true) < $deadline);
        self::assertInstanceOf(RequestLog::class, $found);
        self::assertSame(200, $found->status);
        self::assertStringNotContainsString($student->id, $found->route);
        self::assertEquals($found, $client->requestLogs->retrieve($found->id));

        $usage = $client->usage->retrieve();
        self::assertSame('usage', $usage->object);
        self::assertCount(168, $usage->requests);
        self::assertCount(168, $usage->webhookDeliveries);
    }
}
