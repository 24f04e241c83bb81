<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PlatformApi\Exception\ConflictException;
use PlatformApi\Exception\NotFoundException;
use PlatformApi\Model\Enrollment;
use PlatformApi\Model\EnrollmentStatus;

final class CoursesEnrollmentsLiveTest extends LiveTestCase
{
    public function testCourseLifecycle(): void
    {
        $client = self::client();
        $course = self::newCourse($client);
        self::assertStringStartsWith('crs_', $course->id);
        self::assertSame(30, $course->capacity);
        self::assertSame($course->id, $client->courses->retrieve($course->id)->id);

        $updated = $client->courses->update(
            $course->id,
            ['title' => 'Difference Engines', 'description' => null, 'end_date' => '2026-12-31'],
        );
        self::assertSame('Difference Engines', $updated->title);
        self::assertSame('2026-12-31', $updated->endDate);

        $codes = array_map(
            static fn ($c) => $c->code,
            iterator_to_array($client->courses->list(['code' => $course->code])),
        );
        self::assertSame([$course->code], $codes);

        self::assertTrue($client->courses->delete($course->id)->deleted);
        $this->expectException(NotFoundException::class);
        $client->courses->retrieve($course->id);
    }

    public function testEnrollmentTransitions(): void
    {
        $client = self::client();
        $student = self::newStudent($client);
        $course = self::newCourse($client);

        $enrollment = $client->enrollments->create(
            ['student_id' => $student->id, 'course_id' => $course->id, 'notes' => 'first'],
        );
        self::assertSame(EnrollmentStatus::PENDING, $enrollment->status);
        self::assertSame('second', $client->enrollments->update($enrollment->id, ['notes' => 'second'])->notes);
        self::assertNull($client->enrollments->update($enrollment->id, ['notes' => null])->notes);

        $active = $client->enrollments->activate($enrollment->id);
        self::assertSame(EnrollmentStatus::ACTIVE, $active->status);
        self::assertInstanceOf(\DateTimeImmutable::class, $active->activatedAt);
        $completed = $client->enrollments->complete($enrollment->id);
        self::assertSame(EnrollmentStatus::COMPLETED, $completed->status);
        self::assertSame($completed->toArray(), $client->enrollments->retrieve($enrollment->id)->toArray());

        try {
            $client->enrollments->activate($enrollment->id);
            self::fail('expected a ConflictException');
        } catch (ConflictException $e) {
            self::assertSame('invalid_state_transition', $e->errorCode);
        }

        $second = $client->enrollments->create(['student_id' => $student->id, 'course_id' => $course->id]);
        self::assertSame(EnrollmentStatus::DROPPED, $client->enrollments->drop($second->id)->status);
        $third = $client->enrollments->create(['student_id' => $student->id, 'course_id' => $course->id]);
        self::assertSame(EnrollmentStatus::CANCELLED, $client->enrollments->cancel($third->id)->status);

        $ids = [];
        foreach ($client->enrollments->list(['student_id' => $student->id, 'sort' => 'created_at']) as $e) {
            self::assertInstanceOf(Enrollment::class, $e);
            $ids[] = $e->id;
        }
        self::assertSame([$enrollment->id, $second->id, $third->id], $ids);
        $filtered = $client->enrollments->list(['student_id' => $student->id, 'status' => ['dropped', 'cancelled']]);
        self::assertSame(2, $filtered->total);
    }
}
