<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Unit;

use PHPUnit\Framework\TestCase;
use PlatformApi\ClientOptions;
use PlatformApi\Exception\ServerException;
use PlatformApi\RequestOptions;
use PlatformApi\Tests\Support\ClientFactory;
use PlatformApi\Tests\Support\FakeTransport;
use PlatformApi\Tests\Support\Fixtures;

final class IdempotencyTest extends TestCase
{
    use ClientFactory;

    private const UUID4 = '/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/';

    public function testEveryPostGetsItsOwnKeyActionsIncluded(): void
    {
        $this->script(
            FakeTransport::json(201, Fixtures::student()),
            FakeTransport::json(201, Fixtures::student()),
            FakeTransport::json(200, ['id' => 'enr_1', 'object' => 'enrollment', 'status' => 'active']),
        );
        $client = $this->client();
        $client->students->create(['student_number' => 'S-1', 'first_name' => 'A', 'last_name' => 'B']);
        $client->students->create(['student_number' => 'S-1', 'first_name' => 'A', 'last_name' => 'B']);
        $client->enrollments->activate('enr_1');
        $keys = array_map(static fn ($r) => $r->headers['idempotency-key'] ?? null, $this->transport->requests);
        foreach ($keys as $key) {
            self::assertMatchesRegularExpression(self::UUID4, (string) $key);
        }
        self::assertCount(3, array_unique($keys), 'two calls with the same body are still two calls');
    }

    public function testGetPatchAndDeleteCarryNoKey(): void
    {
        $this->script(
            FakeTransport::json(200, Fixtures::student()),
            FakeTransport::json(200, Fixtures::student()),
            FakeTransport::json(200, ['id' => 'stu_01', 'object' => 'student', 'deleted' => true]),
        );
        $client = $this->client();
        $client->students->retrieve('stu_01');
        $client->students->update('stu_01', ['first_name' => 'B']);
        $client->students->delete('stu_01');
        foreach ($this->transport->requests as $request) {
            self::assertArrayNotHasKey('idempotency-key', $request->headers, $request->method);
        }
    }

    public function testTheCallersKeyWinsAndIsKeptAcrossRetries(): void
    {
        $this->script(
            FakeTransport::problem(503, 'service_unavailable'),
            FakeTransport::json(201, Fixtures::student()),
        );
        $this->client()->students->create(
            ['student_number' => 'S-1', 'first_name' => 'A', 'last_name' => 'B'],
            new RequestOptions(idempotencyKey: 'sis-import-42'),
        );
        self::assertSame(
            ['sis-import-42', 'sis-import-42'],
            array_map(static fn ($r) => $r->headers['idempotency-key'], $this->transport->requests),
        );
    }

    public function testAKeyGivenAsAHeaderAlsoWins(): void
    {
        $this->script(FakeTransport::json(201, Fixtures::student()));
        $this->client()->students->create(
            ['student_number' => 'S-1', 'first_name' => 'A', 'last_name' => 'B'],
            new RequestOptions(headers: ['Idempotency-Key' => 'from-header']),
        );
        self::assertSame('from-header', $this->transport->requests[0]->headers['idempotency-key']);
    }

    public function testWithKeysTurnedOffAPostIsNotRetriedOnA5xx(): void
    {
        $this->script(FakeTransport::problem(503, 'service_unavailable'));
        try {
            $this->client(new ClientOptions(idempotencyKeys: false))->students->create(['first_name' => 'A']);
            self::fail('expected a ServerException');
        } catch (ServerException) {
            self::assertCount(1, $this->transport->requests);
            self::assertArrayNotHasKey('idempotency-key', $this->transport->requests[0]->headers);
        }
    }
}
