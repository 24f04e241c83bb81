<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

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
        $done = Exports::wait($client, $created->id, 0.05, 60.0);
        self::assertSame('succeeded', $done->status);
        self::assertNotNull($done->cursor);

        $file = fopen('php://memory', 'w+b');
        self::assertNotFalse($file);
        $size = Exports::download($client, $done->id, $file);
        self::assertSame($done->sizeBytes, $size);
        rewind($file);
        $records = [];
        while (($line = fgets($file)) !== false) {
            if (trim($line) !== '') {
                $records[] = json_decode($line, true, 512, JSON_THROW_ON_ERROR);
            }
        }
        self::assertCount($done->rowCount, $records);

        // The generated call answers too; its body is the file, which it does not parse.
        $client->exports->download($done->id);
        $ids = [];
        foreach ($client->exports->list(['collection' => 'students'])->data as $export) {
            $ids[] = $export->id;
        }
        self::assertContains($done->id, $ids);

        $sums = $client->checksums->retrieve(['collections' => 'students']);
        self::assertSame(count($records), $sums->data[0]->count);
        self::assertSame(Exports::collectionChecksum($records), $sums->data[0]->checksum);
    }

    public function testWaitingForAnUnknownExportThrows(): void
    {
        $this->expectException(NotFoundException::class);
        Exports::wait(self::client(), 'exp_01JA0000000000000000000000', 0.01);
    }
}
