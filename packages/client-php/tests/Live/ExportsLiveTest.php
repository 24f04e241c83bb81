<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PlatformApi\Core\Cursor;
use PlatformApi\Exception\NotFoundException;
use PlatformApi\Export\Exports;

final class ExportsLiveTest extends LiveTestCase
{
    public function testCreateWaitDownloadAndChecksum(): void
    {
        $client = self::client();
        for ($i = 0; $i < 3; $i++) {
            $client->students->create([
                'student_number' => self::unique('X-'),
                'first_name' => 'Ex',
                'last_name' => 'Port',
            ]);
        }
        $created = $client->exports->create(['collection' => 'students']);
        self::assertStringStartsWith('exp_', $created->id);
        $done = $client->exports->wait($created->id, 0.05, 60.0);
        self::assertSame('succeeded', $done->status);
        self::assertNotNull($done->cursor);

        $file = fopen('php://memory', 'w+b');
        self::assertNotFalse($file);
        $size = $client->exports->downloadTo($done->id, $file);
        self::assertSame($done->sizeBytes, $size);
        rewind($file);
        $records = [];
        while (($line = fgets($file)) !== false) {
            if (trim($line) !== '') {
                $records[] = json_decode($line, true, 512, JSON_THROW_ON_ERROR);
            }
        }
        self::assertCount($done->rowCount, $records);

        // The generated call answers the whole file as a string (not JSON, so not parsed).
        rewind($file);
        self::assertSame(stream_get_contents($file), $client->exports->download($done->id));
        $ids = [];
        foreach ($client->exports->list(['collection' => 'students'])->data as $export) {
            $ids[] = $export->id;
        }
        self::assertContains($done->id, $ids);

        $sums = $client->checksums->retrieve(['collections' => 'students']);
        self::assertSame(count($records), $sums->data[0]->count);
        self::assertSame(Exports::collectionChecksum($records), $sums->data[0]->checksum);

        // The export's cursor is where the feed goes on from the snapshot: a student created since
        // is after it, none of those in the file is. Both cursors are the feed's opaque strings.
        self::assertMatchesRegularExpression(Cursor::PATTERN, $done->cursor);
        self::assertMatchesRegularExpression(Cursor::PATTERN, $sums->cursor);
        $later = self::newStudent($client);
        $since = [];
        $follower = $client->changes->follow(
            ['after' => $done->cursor, 'type' => 'student.created', 'until_caught_up' => true],
        );
        foreach ($follower as $event) {
            $since[] = $event->toArray()['data']['id'] ?? null;
        }
        self::assertSame([$later->id], $since);
        self::assertSame([], array_intersect(array_column($records, 'id'), $since));
    }

    public function testABatchExportsSeveralCollectionsFromOneSnapshot(): void
    {
        $client = self::client();
        $student = $client->students->create([
            'student_number' => self::unique('B-'),
            'first_name' => 'Bat',
            'last_name' => 'Ch',
        ]);
        $course = $client->courses->create(['code' => self::unique('B-'), 'title' => 'Batch']);
        $client->enrollments->create(['student_id' => $student->id, 'course_id' => $course->id]);
        $batch = $client->exports->createBatch(['collections' => ['enrollments', 'students', 'courses']]);
        self::assertSame('export_batch', $batch->object);
        $done = [];
        foreach ($batch->data as $started) {
            $done[] = $client->exports->wait($started->id, 0.05, 60.0);
        }
        self::assertSame(['enrollments', 'students', 'courses'], array_map(fn ($e) => $e->collection, $done));
        self::assertSame(['succeeded', 'succeeded', 'succeeded'], array_map(fn ($e) => $e->status, $done));
        self::assertNotNull($done[0]->cursor);
        self::assertSame([$done[0]->cursor], array_values(array_unique(array_map(fn ($e) => $e->cursor, $done))));
        $files = [];
        foreach ($done as $export) {
            $rows = [];
            foreach (explode("\n", $client->exports->download($export->id)) as $line) {
                if ($line !== '') {
                    $row = json_decode($line, true, 512, JSON_THROW_ON_ERROR);
                    $rows[$row['id']] = $row;
                }
            }
            $files[] = $rows;
        }
        [$enrollments, $students, $courses] = $files;
        self::assertNotEmpty($enrollments);
        foreach ($enrollments as $enrollment) {
            self::assertArrayHasKey($enrollment['student_id'], $students);
            self::assertArrayHasKey($enrollment['course_id'], $courses);
        }
    }

    public function testADownloadLinkFetchesTheFileWithoutAToken(): void
    {
        $client = self::client();
        $client->students->create([
            'student_number' => self::unique('L-'),
            'first_name' => 'Link',
            'last_name' => 'Ed',
        ]);
        $created = $client->exports->create(['collection' => 'students', 'format' => 'csv']);
        $done = $client->exports->wait($created->id, 0.05, 60.0);
        $link = $client->exports->createDownloadLink($done->id);
        self::assertSame('export_download_link', $link->object);
        self::assertSame($done->id, $link->exportId);

        $file = fopen('php://memory', 'w+b');
        self::assertNotFalse($file);
        $client->exports->downloadTo($done->id, $file);
        rewind($file);
        // A plain GET with no Authorization header.
        $fetched = file_get_contents($link->url);
        self::assertSame(stream_get_contents($file), $fetched);
    }

    public function testALargeExportStreamsToAFileWithBoundedMemory(): void
    {
        $client = self::client();
        // About 700 bytes a row: 4,500 students make an export of over 3 MB.
        $padding = str_repeat('x', 90);
        for ($i = 0; $i < 4500; $i++) {
            $client->students->create([
                'student_number' => self::unique('BIG-') . str_repeat('n', 30),
                'first_name' => "First{$padding}",
                'last_name' => "Last{$padding}",
                'preferred_name' => "Preferred{$padding}",
                'email' => "big{$i}." . str_repeat('e', 60) . '@example.edu',
            ]);
        }
        $created = $client->exports->create(['collection' => 'students', 'format' => 'ndjson']);
        $done = $client->exports->wait($created->id, 0.1, 120.0);
        self::assertGreaterThan(3_000_000, $done->sizeBytes);

        $path = tempnam(sys_get_temp_dir(), 'export-');
        self::assertNotFalse($path);
        try {
            gc_collect_cycles();
            memory_reset_peak_usage();
            $before = memory_get_usage();
            $size = $client->exports->downloadTo($done->id, $path);
            $peak = memory_get_peak_usage() - $before;

            self::assertSame($done->sizeBytes, $size);
            self::assertSame($done->sizeBytes, filesize($path));
            // Reading the whole body would need at least the file's size; streaming needs chunks.
            self::assertLessThan(intdiv($done->sizeBytes, 10), $peak, "peak memory {$peak} B");

            $rows = 0;
            $file = fopen($path, 'rb');
            self::assertNotFalse($file);
            while (($line = fgets($file)) !== false) {
                if (trim($line) !== '') {
                    json_decode($line, true, 512, JSON_THROW_ON_ERROR);
                    $rows++;
                }
            }
            fclose($file);
            self::assertSame($done->rowCount, $rows);
            // The same bytes as the server's file.
            $served = $client->request('GET', "/v1/exports/{$done->id}/file")->body;
            self::assertSame(hash('sha256', $served), hash_file('sha256', $path));
        } finally {
            @unlink($path);
        }
    }

    public function testDownloadingAnExpiredOrUnknownExportThrowsAndWritesNoFile(): void
    {
        $path = sys_get_temp_dir() . '/export-missing-' . bin2hex(random_bytes(6));
        try {
            self::client()->exports->downloadTo('exp_01JA0000000000000000000000', $path);
            self::fail('downloading an unknown export did not throw');
        } catch (NotFoundException $e) {
            self::assertSame(404, $e->statusCode);
        }
        self::assertFileDoesNotExist($path);
    }

    public function testWaitingForAnUnknownExportThrows(): void
    {
        $this->expectException(NotFoundException::class);
        self::client()->exports->wait('exp_01JA0000000000000000000000', 0.01);
    }
}
