<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PlatformApi\Core\Upload;
use PlatformApi\Exception\ConflictException;
use PlatformApi\Exception\NotFoundException;
use PlatformApi\RequestOptions;

/**
 * Imports against a live server: a file uploaded from a path or a string, waited for, listed, its error report;
 * a OneRoster bundle, each of its imports waited for.
 */
final class ImportsLiveTest extends LiveTestCase
{
    public function testImportACsvFileWaitAndReadTheErrorReport(): void
    {
        $client = self::client();
        [$good, $bad] = [self::unique('PHP-'), self::unique('PHP-')];
        $path = tempnam(sys_get_temp_dir(), 'import') . '.csv';
        file_put_contents(
            $path,
            "external_id,student_number,first_name,last_name,email\n"
            . "{$good}," . self::unique('N-') . ",Ada,Lovelace,\n"
            . "{$bad}," . self::unique('N-') . ",Alan,Turing,not-an-email\n",
        );
        try {
            $created = $client->imports->create(Upload::fromPath($path), ['collection' => 'students']);
        } finally {
            unlink($path);
        }
        self::assertStringStartsWith('imp_', $created->id);
        self::assertSame('csv', $created->format);
        self::assertSame(2, $created->rows);
        $done = $client->imports->wait($created->id, 0.05, 60.0);
        self::assertSame('succeeded', $done->status);
        self::assertSame(1, $done->counts->created);
        self::assertSame(1, $done->counts->failed);
        self::assertSame('Ada', $client->students->retrieve('ext:' . $good)->firstName);

        $report = explode("\n", $client->imports->errors($done->id));
        self::assertSame('row,external_id,field,code,problem', $report[0]);
        self::assertStringStartsWith("2,{$bad},email,", $report[1]);
        $ids = array_map(static fn ($i) => $i->id, $client->imports->list(['collection' => 'students'])->data);
        self::assertContains($done->id, $ids);
        self::assertSame(2, $client->imports->retrieve($done->id)->rowsProcessed);
    }

    public function testAStringWithAFormatADryRunAndAnIdempotencyKey(): void
    {
        $client = self::client();
        $key = self::unique('PHP-');
        $line = json_encode([
            'external_id' => $key,
            'student_number' => self::unique('N-'),
            'first_name' => 'G',
            'last_name' => 'H',
        ]) . "\n";
        $dry = $client->imports->create(
            Upload::fromString($line, 'rows.txt'),
            ['collection' => 'students', 'format' => 'ndjson', 'dry_run' => true],
        );
        self::assertSame(1, $client->imports->wait($dry->id, 0.05)->counts->created);
        try {
            $client->students->retrieve('ext:' . $key);
            self::fail('a dry run wrote the student');
        } catch (NotFoundException) {
        }

        $options = new RequestOptions(idempotencyKey: self::unique('php-import-'));
        $params = ['collection' => 'students', 'format' => 'ndjson'];
        $first = $client->imports->create(Upload::fromString($line, 'rows.ndjson'), $params, $options);
        $again = $client->imports->raw->create(Upload::fromString($line, 'rows.ndjson'), $params, $options);
        self::assertSame('true', $again->header('Idempotent-Replayed'));
        self::assertSame($first->id, $again->parse()->id);
        $this->expectException(ConflictException::class);
        $client->imports->create(Upload::fromString("{}\n", 'rows.ndjson'), $params, $options);
    }

    public function testAOneRosterBundleIsImportedAsItsFiles(): void
    {
        $client = self::client();
        [$student, $teacher] = [self::unique('ORS-'), self::unique('ORT-')];
        $path = tempnam(sys_get_temp_dir(), 'roster') . '.zip';
        $zip = new \ZipArchive();
        $zip->open($path, \ZipArchive::CREATE | \ZipArchive::OVERWRITE);
        $zip->addFromString(
            'manifest.csv',
            "propertyName,value\nmanifest.version,1.0\noneroster.version,1.2\nfile.users,delta\nfile.roles,delta\n",
        );
        $zip->addFromString(
            'users.csv',
            "sourcedId,status,dateLastModified,enabledUser,givenName,familyName,identifier\n"
            . "{$student},active,,true,Ada,Byron," . self::unique('N-') . "\n{$teacher},active,,true,Tess,Teacher,\n",
        );
        $zip->addFromString(
            'roles.csv',
            "sourcedId,status,dateLastModified,userSourcedId,roleType,role,orgSourcedId\n"
            . "r1,,,{$student},primary,student,s1\nr2,,,{$teacher},primary,teacher,s1\n",
        );
        $zip->close();
        try {
            $created = $client->imports->create(Upload::fromPath($path), ['format' => 'oneroster']);
        } finally {
            unlink($path);
        }
        self::assertSame('oneroster', $created->format);
        self::assertSame('users.csv', $created->bundle?->file);
        self::assertSame([$created->id], $created->bundle?->imports);
        $done = $client->imports->wait($created->id, 0.05, 60.0);
        self::assertSame('succeeded', $done->status);
        self::assertSame(1, $done->counts->created);
        self::assertSame(1, $done->counts->skipped);
        self::assertSame('Ada', $client->students->retrieve('ext:' . $student)->firstName);
        self::assertStringContainsString(",{$teacher},role,not_mapped,", $client->imports->errors($done->id));
    }
}
