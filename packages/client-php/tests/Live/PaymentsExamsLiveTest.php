<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PlatformApi\Exception\ValidationException;
use PlatformApi\Model\ExamResultStatus;
use PlatformApi\Model\PaymentStatus;

final class PaymentsExamsLiveTest extends LiveTestCase
{
    public function testPaymentLifecycle(): void
    {
        $client = self::client();
        $student = self::newStudent($client);
        $reference = self::unique('INV-');
        $payment = $client->payments->create([
            'student_id' => $student->id,
            'amount' => 12500,
            'currency' => 'EUR',
            'description' => 'Tuition',
            'external_reference' => $reference,
        ]);
        self::assertSame(PaymentStatus::PENDING, $payment->status);
        self::assertSame(12500, $payment->amount);

        $succeeded = $client->payments->succeed($payment->id);
        self::assertSame(PaymentStatus::SUCCEEDED, $succeeded->status);
        self::assertInstanceOf(\DateTimeImmutable::class, $succeeded->succeededAt);
        $refunded = $client->payments->refund($payment->id, ['amount' => 2500]);
        self::assertSame(2500, $refunded->amountRefunded);
        try {
            $client->payments->refund($payment->id, ['amount' => 1_000_000]);
            self::fail('expected a ValidationException');
        } catch (ValidationException $e) {
            self::assertContains('body.amount', array_map(static fn ($fe) => $fe->path, $e->errors));
        }

        $failing = $client->payments->create(['student_id' => $student->id, 'amount' => 100, 'currency' => 'EUR']);
        $failed = $client->payments->fail($failing->id, ['failure_reason' => 'card_declined']);
        self::assertSame(PaymentStatus::FAILED, $failed->status);
        self::assertSame('card_declined', $failed->failureReason);

        self::assertSame($refunded->id, $client->payments->retrieve($payment->id)->id);
        $page = $client->payments->list(
            ['student_id' => $student->id, 'amount' => ['gte' => 1000], 'currency' => 'EUR'],
        );
        self::assertSame([$payment->id], array_map(static fn ($p) => $p->id, $page->data));
        self::assertSame(1, count(iterator_to_array($client->payments->list(['q' => $reference]))));
    }

    public function testExamsAndResults(): void
    {
        $client = self::client();
        $course = self::newCourse($client);
        $student = self::newStudent($client);
        // A result needs the student actively enrolled in the exam's course.
        $enrollment = $client->enrollments->create(['student_id' => $student->id, 'course_id' => $course->id]);
        $client->enrollments->activate($enrollment->id);
        $exam = $client->exams->create(
            ['course_id' => $course->id, 'title' => 'Midterm', 'max_score' => 100, 'held_on' => '2026-03-01'],
        );
        self::assertSame(100.0, $exam->maxScore);
        self::assertSame('Midterm', $client->exams->retrieve($exam->id)->title);
        self::assertSame(80.5, $client->exams->update($exam->id, ['max_score' => 80.5])->maxScore);
        self::assertSame(
            [$exam->id],
            array_map(static fn ($e) => $e->id, $client->exams->list(['course_id' => $course->id])->data),
        );

        $result = $client->examResults->create(
            ['exam_id' => $exam->id, 'student_id' => $student->id, 'score' => 70, 'grade' => 'B'],
        );
        self::assertSame(ExamResultStatus::DRAFT, $result->status);
        self::assertSame(70.0, $result->score);
        self::assertSame('A', $client->examResults->update($result->id, ['score' => 79.5, 'grade' => 'A'])->grade);
        $published = $client->examResults->publish($result->id);
        self::assertSame(ExamResultStatus::PUBLISHED, $published->status);
        self::assertSame(79.5, $client->examResults->retrieve($result->id)->score);
        self::assertSame(1, $client->examResults->list(['exam_id' => $exam->id, 'status' => 'published'])->total);

        $other = $client->exams->create(['course_id' => $course->id, 'title' => 'Quiz', 'max_score' => 10]);
        self::assertTrue($client->exams->delete($other->id)->deleted);
    }
}
