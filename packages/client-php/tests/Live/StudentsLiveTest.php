<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PlatformApi\Exception\ConflictException;
use PlatformApi\Exception\NotFoundException;
use PlatformApi\Exception\ValidationException;
use PlatformApi\Model\DeletedStudent;
use PlatformApi\Model\Student;
use PlatformApi\Model\StudentStatus;
use PlatformApi\RequestOptions;

final class StudentsLiveTest extends LiveTestCase
{
    public function testCreateRetrieveUpdateWithNullAndDelete(): void
    {
        $client = self::client();
        $created = $client->students->create([
            'student_number' => self::unique('S-'),
            'first_name' => 'Zoë',
            'last_name' => 'Ångström',
            'preferred_name' => 'Zo',
            'email' => 'zoe@school.test',
            'grade_level' => 9,
            'date_of_birth' => '2011-02-03',
        ]);
        self::assertStringStartsWith('stu_', $created->id);
        self::assertSame('Zoë', $created->firstName);
        self::assertSame(StudentStatus::ACTIVE, $created->status);
        self::assertInstanceOf(\DateTimeImmutable::class, $created->createdAt);

        $fetched = $client->students->retrieve($created->id);
        self::assertSame($created->toArray(), $fetched->toArray());

        // preferred_name: null clears it; grade_level left out stays as it was.
        $updated = $client->students->update($created->id, ['preferred_name' => null, 'last_name' => 'Angstrom']);
        self::assertNull($updated->preferredName);
        self::assertSame('Angstrom', $updated->lastName);
        self::assertSame(9, $updated->gradeLevel);

        $deleted = $client->students->delete($created->id);
        self::assertInstanceOf(DeletedStudent::class, $deleted);
        self::assertTrue($deleted->deleted);
        try {
            $client->students->retrieve($created->id);
            self::fail('expected a NotFoundException');
        } catch (NotFoundException $e) {
            self::assertSame(404, $e->statusCode);
            self::assertSame('not_found', $e->errorCode);
            self::assertNotNull($e->requestId);
        }
    }

    public function testPaginationAcrossManyPagesHasNoDuplicatesAndKeepsTheFilters(): void
    {
        $client = self::client();
        $tag = self::unique('Pag');
        $ids = [];
        for ($i = 0; $i < 23; $i++) {
            $ids[] = self::newStudent(
                $client,
                ['last_name' => "{$tag} {$i}", 'status' => $i % 5 === 0 ? 'inactive' : 'active'],
            )->id;
        }
        $active = array_values(array_filter($ids, static fn ($id, $i) => $i % 5 !== 0, ARRAY_FILTER_USE_BOTH));

        $page = $client->students->list([
            'q' => $tag,
            'status' => 'active',
            'sort' => 'created_at',
            'created_at' => ['gte' => new \DateTimeImmutable('-1 hour')],
            'per_page' => 4,
        ]);
        self::assertSame(count($active), $page->total);
        self::assertSame(5, $page->totalPages);
        $seen = [];
        foreach ($page as $student) {
            self::assertInstanceOf(Student::class, $student);
            self::assertSame('active', $student->status, 'the filter holds on every page');
            $seen[] = $student->id;
        }
        self::assertSame($active, $seen, 'every item once, in created_at order');
        self::assertCount(count($seen), array_unique($seen));
    }

    public function testAnInvalidRequestIsAValidationExceptionNamingTheFields(): void
    {
        try {
            self::client()->students->list(['per_page' => 500, 'status' => 'asleep']);
            self::fail('expected a ValidationException');
        } catch (ValidationException $e) {
            self::assertSame(400, $e->statusCode);
            self::assertSame('validation_error', $e->errorCode);
            $paths = array_map(static fn ($fe) => $fe->path, $e->errors);
            self::assertContains('query.per_page', $paths);
            self::assertContains('query.status', $paths);
            self::assertNotSame('', $e->errors[0]->message);
        }
    }

    public function testADuplicateStudentNumberIsAConflict(): void
    {
        $client = self::client();
        $number = self::unique('S-');
        self::newStudent($client, ['student_number' => $number]);
        try {
            self::newStudent($client, ['student_number' => $number]);
            self::fail('expected a ConflictException');
        } catch (ConflictException $e) {
            self::assertSame(409, $e->statusCode);
            self::assertSame('conflict', $e->errorCode);
        }
    }

    public function testTheSameIdempotencyKeyReplaysTheFirstResponse(): void
    {
        $client = self::client();
        $params = ['student_number' => self::unique('S-'), 'first_name' => 'Ida', 'last_name' => 'Replay'];
        $key = self::unique('key-');
        $first = $client->students->raw->create($params, new RequestOptions(idempotencyKey: $key));
        $second = $client->students->raw->create($params, new RequestOptions(idempotencyKey: $key));
        self::assertSame(201, $first->statusCode);
        self::assertNull($first->header('Idempotent-Replayed'));
        self::assertSame('true', $second->header('Idempotent-Replayed'));
        self::assertSame($first->parse()->id, $second->parse()->id);

        // The same key for another body is refused.
        $this->expectException(ConflictException::class);
        $client->students->create(['first_name' => 'Other'] + $params, new RequestOptions(idempotencyKey: $key));
    }

    public function testRawResponsesShowRateLimitHeadersAndTheRequestId(): void
    {
        $raw = self::client()->students->raw->list(['per_page' => 1]);
        self::assertSame(200, $raw->statusCode);
        self::assertNotNull($raw->requestId);
        self::assertMatchesRegularExpression(
            '/^\d+$/',
            (string) ($raw->header('X-RateLimit-Remaining') ?? $raw->header('RateLimit-Remaining')),
        );
    }
}
