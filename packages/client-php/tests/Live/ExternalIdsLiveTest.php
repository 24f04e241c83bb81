<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PlatformApi\Exception\NotFoundException;

/** External ids and batch upserts against a live server (decision 29). */
final class ExternalIdsLiveTest extends LiveTestCase
{
    public function testBatchUpsertThenAddressByExternalId(): void
    {
        $client = self::client();
        $key = self::unique('SIS-');
        $item = [
            'external_id' => $key,
            'student_number' => self::unique('N-'),
            'first_name' => 'Ada',
            'last_name' => 'Byron',
        ];

        $first = $client->students->batchUpsert(['items' => [$item, ['external_id' => self::unique('SIS-')]]]);
        self::assertSame('batch_result', $first->object);
        self::assertSame('created', $first->data[0]->status);
        self::assertSame('failed', $first->data[1]->status);
        self::assertSame('validation_error', $first->data[1]->error?->code);
        self::assertSame(1, $first->counts->created);
        self::assertSame(1, $first->counts->failed);

        // The path form: ext:<external_id>, percent-encoded by the client.
        $student = $client->students->retrieve('ext:' . $key);
        self::assertSame($first->data[0]->id, $student->id);
        self::assertSame($key, $student->externalId);

        $rename = ['items' => [['external_id' => $key, 'last_name' => 'Lovelace']]];
        self::assertSame('updated', $client->students->batchUpsert($rename)->data[0]->status);
        self::assertSame('unchanged', $client->students->batchUpsert($rename)->data[0]->status);
        self::assertSame('Lovelace', $client->students->retrieve('ext:' . $key)->lastName);
    }

    public function testCoursesBatchUpsertAndExtReferences(): void
    {
        $client = self::client();
        $courseKey = self::unique('class-');
        $studentKey = self::unique('SIS-');
        $result = $client->courses->batchUpsert([
            'items' => [['external_id' => $courseKey, 'code' => self::unique('C-'), 'title' => 'Algebra']],
        ]);
        self::assertSame('created', $result->data[0]->status);
        $student = $client->students->create([
            'external_id' => $studentKey,
            'student_number' => self::unique('N-'),
            'first_name' => 'Ada',
            'last_name' => 'Byron',
        ]);
        $enrollment = $client->enrollments->create([
            'student_id' => 'ext:' . $studentKey,
            'course_id' => 'ext:' . $courseKey,
        ]);
        self::assertSame($student->id, $enrollment->studentId);
        self::assertSame($result->data[0]->id, $enrollment->courseId);
    }

    public function testEnrollmentExternalIdAndExtListFilter(): void
    {
        $client = self::client();
        $courseKey = self::unique('class-');
        $studentKey = self::unique('SIS-');
        $enrollmentKey = self::unique('enr-');
        $client->courses->create(['external_id' => $courseKey, 'code' => self::unique('C-'), 'title' => 'Geometry']);
        $client->students->create([
            'external_id' => $studentKey,
            'student_number' => self::unique('N-'),
            'first_name' => 'Ada',
            'last_name' => 'Byron',
        ]);
        $enrollment = $client->enrollments->create([
            'student_id' => 'ext:' . $studentKey,
            'course_id' => 'ext:' . $courseKey,
            'external_id' => $enrollmentKey,
        ]);
        self::assertSame($enrollment->id, $client->enrollments->retrieve('ext:' . $enrollmentKey)->id);
        // A reference filter takes ext: as well as ids.
        $page = $client->enrollments->list(['student_id' => 'ext:' . $studentKey]);
        self::assertSame([$enrollment->id], array_map(fn ($e) => $e->id, $page->data));
        self::assertSame([], $client->enrollments->list(['student_id' => 'ext:' . self::unique('NONE-')])->data);
    }

    public function testExamsAndResultsBatchUpsert(): void
    {
        $client = self::client();
        $courseKey = self::unique('class-');
        $studentKey = self::unique('SIS-');
        $examKey = self::unique('exam-');
        $resultKey = self::unique('res-');
        $client->courses->create(['external_id' => $courseKey, 'code' => self::unique('C-'), 'title' => 'Physics']);
        $client->students->create([
            'external_id' => $studentKey,
            'student_number' => self::unique('N-'),
            'first_name' => 'Ada',
            'last_name' => 'Byron',
        ]);
        $client->enrollments->create([
            'student_id' => 'ext:' . $studentKey,
            'course_id' => 'ext:' . $courseKey,
            'status' => 'active',
        ]);
        $exams = $client->exams->batchUpsert(['items' => [[
            'external_id' => $examKey,
            'course_id' => 'ext:' . $courseKey,
            'title' => 'Midterm',
            'max_score' => 50,
        ]]]);
        self::assertSame('created', $exams->data[0]->status);
        $result = fn (string $key, int $score): array => [
            'external_id' => $key,
            'exam_id' => 'ext:' . $examKey,
            'student_id' => 'ext:' . $studentKey,
            'score' => $score,
        ];
        $results = $client->examResults->batchUpsert([
            'items' => [$result($resultKey, 40), $result(self::unique('res-'), 30)],
        ]);
        // One result per student and exam: the second item fails alone.
        self::assertSame(['created', 'failed'], array_map(fn ($r) => $r->status, $results->data));
        self::assertSame(409, $results->data[1]->error?->status);
        $corrected = $client->examResults->batchUpsert(['items' => [['external_id' => $resultKey, 'score' => 45]]]);
        self::assertSame('updated', $corrected->data[0]->status);
        self::assertEquals(45, $client->examResults->retrieve('ext:' . $resultKey)->score);
    }

    public function testEnrollmentsAndPaymentsBatchUpsert(): void
    {
        $client = self::client();
        $courseKey = self::unique('class-');
        $studentKey = self::unique('SIS-');
        $enrollmentKey = self::unique('enr-');
        $paymentKey = self::unique('inv-');
        $client->courses->create(['external_id' => $courseKey, 'code' => self::unique('C-'), 'title' => 'Chemistry']);
        $client->students->create([
            'external_id' => $studentKey,
            'student_number' => self::unique('N-'),
            'first_name' => 'Ada',
            'last_name' => 'Byron',
        ]);
        $enrolled = $client->enrollments->batchUpsert(['items' => [[
            'external_id' => $enrollmentKey,
            'student_id' => 'ext:' . $studentKey,
            'course_id' => 'ext:' . $courseKey,
        ]]]);
        self::assertSame('created', $enrolled->data[0]->status);
        // status moves an enrollment on record along its transitions.
        $moved = $client->enrollments->batchUpsert([
            'items' => [['external_id' => $enrollmentKey, 'status' => 'active']],
        ]);
        self::assertSame('updated', $moved->data[0]->status);
        self::assertSame('active', $client->enrollments->retrieve('ext:' . $enrollmentKey)->status);

        $paid = $client->payments->batchUpsert(['items' => [[
            'external_id' => $paymentKey,
            'student_id' => 'ext:' . $studentKey,
            'amount' => 5000,
            'currency' => 'EUR',
            'status' => 'succeeded',
        ]]]);
        self::assertSame('created', $paid->data[0]->status);
        self::assertSame('succeeded', $client->payments->retrieve('ext:' . $paymentKey)->status);
    }

    public function testAnUnknownExternalIdIsNotFound(): void
    {
        $this->expectException(NotFoundException::class);
        self::client()->students->retrieve('ext:' . self::unique('NONE-'));
    }
}
