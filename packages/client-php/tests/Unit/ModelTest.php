<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Unit;

use PHPUnit\Framework\TestCase;
use PlatformApi\Model\Event;
use PlatformApi\Model\PingEvent;
use PlatformApi\Model\Student;
use PlatformApi\Model\StudentCreatedEvent;
use PlatformApi\Model\StudentStatus;
use PlatformApi\Model\UnknownEvent;
use PlatformApi\Model\WebhookEndpoint;
use PlatformApi\Model\WebhookEndpointEvent;
use PlatformApi\Model\WebhookEndpointOwner;
use PlatformApi\Tests\Support\ClientFactory;
use PlatformApi\Tests\Support\FakeTransport;
use PlatformApi\Tests\Support\Fixtures;
use PlatformApi\Webhook\EventInterface;

/** Models are lenient and lossless: what a newer server sends survives, nothing throws. */
final class ModelTest extends TestCase
{
    use ClientFactory;

    public function testTypedPropertiesFromTheResponse(): void
    {
        $this->script(FakeTransport::json(200, Fixtures::student('stu_9', ['preferred_name' => 'Annie'])));
        $s = $this->client()->students->retrieve('stu_9');
        self::assertSame('stu_9', $s->id);
        self::assertSame('Annie', $s->preferredName);
        self::assertSame(9, $s->gradeLevel);
        self::assertSame('2010-04-01', $s->dateOfBirth, 'a calendar date stays a string');
        self::assertInstanceOf(\DateTimeImmutable::class, $s->createdAt);
        self::assertSame('2026-01-02T03:04:05.678000+00:00', $s->createdAt->format('Y-m-d\TH:i:s.uP'));
        self::assertSame(StudentStatus::ACTIVE, $s->status);
    }

    public function testAnUnknownFieldAndAnUnknownEnumValueSurviveARoundTrip(): void
    {
        $payload = Fixtures::student('stu_9', ['status' => 'on_exchange', 'field_added_later' => ['nested' => [1, 2]]]);
        $this->script(FakeTransport::json(200, $payload));
        $s = $this->client()->students->retrieve('stu_9');
        self::assertSame('on_exchange', $s->status);
        self::assertFalse(StudentStatus::isKnown($s->status));
        self::assertSame(['nested' => [1, 2]], $s['field_added_later']);
        self::assertTrue(isset($s['field_added_later']));
        self::assertFalse(isset($s['never_sent']));
        self::assertNull($s['never_sent']);
        self::assertSame($payload, $s->toArray());
        self::assertSame($payload, Student::fromArray($s->toArray())->toArray());
        self::assertSame(json_encode($payload), json_encode($s));
    }

    public function testModelsAreReadOnly(): void
    {
        $s = Student::fromArray(Fixtures::student());
        $this->expectException(\LogicException::class);
        $s['first_name'] = 'Eve';
    }

    public function testReadonlyProperties(): void
    {
        $s = Student::fromArray(Fixtures::student());
        $this->expectException(\Error::class);
        // @phpstan-ignore-next-line
        $s->firstName = 'Eve';
    }

    public function testAPayloadOfTheWrongShapeNeverThrows(): void
    {
        $s = Student::fromArray(['id' => 7, 'grade_level' => '11', 'created_at' => 'not a date', 'status' => null]);
        self::assertSame('7', $s->id);
        self::assertSame(11, $s->gradeLevel);
        self::assertSame('', $s->firstName);
        self::assertSame(0, $s->createdAt->getTimestamp());
        self::assertSame('', $s->status);
        self::assertSame(
            ['id' => 7, 'grade_level' => '11', 'created_at' => 'not a date', 'status' => null],
            $s->toArray(),
        );
    }

    public function testNestedModelsListsOfEnumsAndEmptyObjects(): void
    {
        $payload = [
            'id' => 'we_1', 'object' => 'webhook_endpoint', 'url' => 'https://hooks.school.test/x',
            'description' => null,
            'events' => ['student.created', 'teacher.hired'], 'enabled' => true, 'disabled_reason' => null,
            'owner' => ['type' => 'personal_access_token', 'id' => 'tok_1', 'user_id' => null],
            'created_at' => '2026-01-01T00:00:00.000Z', 'updated_at' => '2026-01-01T00:00:00.000Z',
            'member_id' => 'usr_1',
        ];
        $endpoint = WebhookEndpoint::fromArray($payload);
        self::assertInstanceOf(WebhookEndpointOwner::class, $endpoint->owner);
        self::assertSame('tok_1', $endpoint->owner->id);
        self::assertSame([WebhookEndpointEvent::STUDENT_CREATED, 'teacher.hired'], $endpoint->events);
        self::assertNull($endpoint->description);

        // `{}` decodes to [] in PHP; encoding the model gives `{}` back where the schema has an object.
        $payload['owner'] = [];
        self::assertStringContainsString('"owner":{}', json_encode(WebhookEndpoint::fromArray($payload)) ?: '');
    }

    public function testAModelBuiltInCodeSerializesLikeTheApi(): void
    {
        $owner = new WebhookEndpointOwner('oauth_client', 'oac_1', null);
        $endpoint = new WebhookEndpoint(
            'we_1',
            'webhook_endpoint',
            'https://hooks.school.test/x',
            null,
            ['*'],
            true,
            null,
            $owner,
            new \DateTimeImmutable('2026-01-01T01:00:00+01:00'),
            new \DateTimeImmutable('@1767225600'),
            'usr_1',
            new \DateTimeImmutable('2026-01-02T00:00:00Z'),
            new \DateTimeImmutable('2026-01-07T00:00:00Z'),
        );
        self::assertSame([
            'id' => 'we_1', 'object' => 'webhook_endpoint', 'url' => 'https://hooks.school.test/x',
            'description' => null,
            'events' => ['*'], 'enabled' => true, 'disabled_reason' => null,
            'owner' => ['type' => 'oauth_client', 'id' => 'oac_1', 'user_id' => null],
            'created_at' => '2026-01-01T00:00:00.000Z', 'updated_at' => '2026-01-01T00:00:00.000Z',
            'member_id' => 'usr_1',
            'failing_since' => '2026-01-02T00:00:00.000Z', 'disables_at' => '2026-01-07T00:00:00.000Z',
        ], $endpoint->toArray());
        self::assertSame('*', WebhookEndpointEvent::ALL);
    }

    public function testTheEventUnionPicksTheClassByType(): void
    {
        $event = Event::fromArray([
            'id' => 'evt_1', 'object' => 'event', 'type' => 'student.created',
            'timestamp' => '2026-01-01T00:00:00.000Z',
            'api_version' => 'v1', 'data' => Fixtures::student(),
        ]);
        self::assertInstanceOf(StudentCreatedEvent::class, $event);
        self::assertInstanceOf(EventInterface::class, $event);
        self::assertSame(StudentCreatedEvent::TYPE, $event->eventType());
        self::assertInstanceOf(Student::class, $event->data);
        self::assertInstanceOf(PingEvent::class, Event::fromArray(['type' => 'ping', 'data' => ['message' => 'hi']]));

        $unknown = Event::fromArray(['id' => 'evt_2', 'type' => 'student.teleported', 'data' => ['id' => 'stu_1']]);
        self::assertInstanceOf(UnknownEvent::class, $unknown);
        self::assertSame('student.teleported', $unknown->eventType());
        self::assertSame('evt_2', $unknown->id);
        self::assertInstanceOf(UnknownEvent::class, Event::fromArray(['no' => 'type']));
    }

    public function testAnEventCarriesItsFeedCursorAfterItsPosition(): void
    {
        $event = Event::fromArray([
            'id' => 'evt_1', 'position' => 42, 'cursor' => '42.Xk3aB9_-q1', 'object' => 'event',
            'type' => 'student.created', 'timestamp' => '2026-01-01T00:00:00.000Z',
            'api_version' => 'v1', 'data' => Fixtures::student(), 'previous_position' => 40,
        ]);
        self::assertInstanceOf(StudentCreatedEvent::class, $event);
        self::assertSame(42, $event->position);
        self::assertSame('42.Xk3aB9_-q1', $event->cursor);
        self::assertSame(40, $event->previousPosition);
        self::assertSame(['id', 'position', 'cursor'], array_slice(array_keys($event->toArray()), 0, 3));
        $ping = Event::fromArray([
            'id' => 'evt_2', 'position' => null, 'cursor' => null, 'object' => 'event', 'type' => 'ping',
            'timestamp' => '2026-01-01T00:00:00.000Z', 'api_version' => 'v1', 'data' => ['message' => 'hi'],
        ]);
        self::assertInstanceOf(PingEvent::class, $ping);
        self::assertNull($ping->cursor);
    }

    public function testEnumConstantsClasses(): void
    {
        self::assertSame(['active', 'inactive', 'graduated', 'withdrawn'], StudentStatus::values());
        self::assertTrue(StudentStatus::isKnown('graduated'));
        self::assertSame('students:read', \PlatformApi\Model\Scope::STUDENTS_READ);
    }
}
