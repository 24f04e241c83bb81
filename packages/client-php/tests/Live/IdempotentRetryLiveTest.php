<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PlatformApi\Core\Request;
use PlatformApi\Core\Response;
use PlatformApi\Core\Transport;
use PlatformApi\Exception\ApiConnectionException;
use PlatformApi\Tests\Support\RecordingTransport;

/**
 * The case idempotency keys exist for: the server did the work but its answer was lost. The SDK
 * retries with the same key and the server replays the first answer instead of creating twice.
 */
final class IdempotentRetryLiveTest extends LiveTestCase
{
    public function testALostAnswerToAPostIsRetriedWithTheSameKeyAndReplayed(): void
    {
        $recording = new RecordingTransport();
        $lossy = new class ($recording) implements Transport {
            public int $dropped = 0;

            public function __construct(private readonly Transport $inner)
            {
            }

            public function send(Request $request): Response
            {
                $response = $this->inner->send($request);
                if ($request->method === 'POST' && $this->dropped === 0) {
                    $this->dropped++;
                    throw new ApiConnectionException(
                        'connection reset after the request was sent',
                        'POST',
                        $request->url,
                    );
                }
                return $response;
            }
        };
        $number = self::unique('S-');
        $raw = self::client(
            transport: $lossy,
        )->students->raw->create(['student_number' => $number, 'first_name' => 'Lost', 'last_name' => 'Answer']);

        self::assertSame(1, $lossy->dropped);
        [$first, $second] = $recording->requests;
        self::assertSame($first->headers['idempotency-key'], $second->headers['idempotency-key']);
        self::assertSame(201, $recording->responses[0]->status, 'the first attempt did create the student');
        self::assertSame('true', $raw->header('Idempotent-Replayed'));
        $created = $raw->parse();
        self::assertSame(json_decode($recording->responses[0]->body, true)['id'], $created->id);
        self::assertSame(1, self::client()->students->list(['q' => $number])->total, 'created once');
    }
}
