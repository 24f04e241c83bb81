<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Unit;

use PHPUnit\Framework\TestCase;
use PlatformApi\Core\Json;
use PlatformApi\Core\Query;
use PlatformApi\Exception\InvalidArgumentException;
use PlatformApi\Tests\Support\ClientFactory;
use PlatformApi\Tests\Support\FakeTransport;
use PlatformApi\Tests\Support\Fixtures;

/** Query strings and JSON bodies as the API reads them: ranges, lists, null versus absent, `{}` versus `[]`. */
final class EncodingTest extends TestCase
{
    use ClientFactory;

    public function testListFiltersRangesAndSortAreEncodedTheApisWay(): void
    {
        $this->script(FakeTransport::json(200, Fixtures::page([], 1, 25, 0)));
        $this->client()->students->list([
            'status' => ['active', 'inactive'],
            'created_at' => [
                'gte' => new \DateTimeImmutable('2026-01-01T01:00:00+01:00'),
                'lt' => '2026-02-01T00:00:00Z',
            ],
            'sort' => '-created_at',
            'q' => 'Ana María',
            'per_page' => 100,
            'grade_level' => null,
        ]);
        self::assertSame(
            'https://api.school.test/v1/students?status=active,inactive&created_at[gte]=2026-01-01T00%3A00%3A00.000Z'
            . '&created_at[lt]=2026-02-01T00%3A00%3A00Z&sort=-created_at&q=Ana%20Mar%C3%ADa&per_page=100',
            $this->transport->requests[0]->url,
        );
        self::assertNull($this->transport->requests[0]->body);
    }

    public function testQueryScalars(): void
    {
        self::assertSame(
            'enabled=true&x=false&n=1.5&s=a%26b%3Dc',
            Query::build(['enabled' => true, 'x' => false, 'n' => 1.5, 's' => 'a&b=c']),
        );
        self::assertSame('', Query::build(['a' => null]));
        self::assertSame('b=x,y', Query::build(['b' => ['x', null, 'y']]));
        self::assertSame('page=2', Query::build(['status' => [], 'page' => 2, 'grade' => [null]]));
        self::assertSame('a[b][c]=1', Query::build(['a' => ['b' => ['c' => 1]]]));
    }

    public function testAQueryValueOfTheWrongKindIsRefusedBeforeSending(): void
    {
        $this->expectException(InvalidArgumentException::class);
        Query::build(['x' => new \stdClass()]);
    }

    public function testNullIsSentAndAnAbsentKeyIsNot(): void
    {
        $this->script(FakeTransport::json(200, Fixtures::student()));
        $this->client()->students->update('stu_01', ['preferred_name' => null, 'grade_level' => 10]);
        $request = $this->transport->requests[0];
        self::assertSame('PATCH', $request->method);
        self::assertSame('{"preferred_name":null,"grade_level":10}', $request->body);
        self::assertSame('application/json', $request->headers['content-type']);
    }

    public function testAnEmptyBodyIsAnObjectNotAList(): void
    {
        $this->script(FakeTransport::json(200, Fixtures::student()), FakeTransport::json(201, Fixtures::student()));
        $this->client()->students->update('stu_01', []);
        $this->client()->students->create([]);
        self::assertSame('{}', $this->transport->requests[0]->body);
        self::assertSame('{}', $this->transport->requests[1]->body);
    }

    public function testObjectPathsKeepEmptyMapsObjectsAndListsLists(): void
    {
        $params = [
            'metadata' => [],
            'events' => [],
            'owner' => ['tags' => []],
            'items' => [[], ['a' => 1]],
            'numbered' => ['7' => 'x'],
        ];
        self::assertSame(
            '{"metadata":{},"events":[],"owner":{"tags":{}},"items":[{},{"a":1}],"numbered":{"7":"x"}}',
            Json::encodeBody($params, ['', 'metadata', 'owner', 'owner.tags', 'items.*', 'numbered']),
        );
        // Without the schema's knowledge PHP's arrays are JSON arrays.
        self::assertSame('{"metadata":[]}', Json::encodeBody(['metadata' => []]));
    }

    public function testBodyValuesAreEncodedLosslessly(): void
    {
        self::assertSame(
            '{"score":1.0,"name":"Zoë/Ω","at":"2026-01-01T00:00:00.000Z","big":9007199254740993}',
            Json::encodeBody([
                'score' => 1.0,
                'name' => 'Zoë/Ω',
                'at' => new \DateTime('2025-12-31T19:00:00-05:00'),
                'big' => 9007199254740993,
            ]),
        );
    }

    public function testABodyThatIsNotValidUtf8IsRefusedBeforeSending(): void
    {
        $this->script();
        try {
            $this->client()->students->create(['first_name' => "\xB1\x31"]);
            self::fail('expected an InvalidArgumentException');
        } catch (InvalidArgumentException $e) {
            self::assertStringContainsString('cannot be encoded as JSON', $e->getMessage());
        }
        self::assertSame([], $this->transport->requests);
    }

    public function testPathParametersAreEncoded(): void
    {
        $this->script(FakeTransport::json(200, Fixtures::student()));
        $this->client()->students->retrieve('../admin?x=1');
        self::assertSame('https://api.school.test/v1/students/..%2Fadmin%3Fx%3D1', $this->transport->requests[0]->url);
    }

    public function testAnActionWithoutBodySendsNone(): void
    {
        $this->script(FakeTransport::json(200, ['id' => 'enr_1', 'object' => 'enrollment']));
        $this->client()->enrollments->activate('enr_1');
        $request = $this->transport->requests[0];
        self::assertSame(
            ['POST', 'https://api.school.test/v1/enrollments/enr_1/activate'],
            [$request->method, $request->url],
        );
        self::assertNull($request->body);
        self::assertArrayNotHasKey('content-type', $request->headers);
    }
}
