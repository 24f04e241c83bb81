<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PlatformApi\Core\Request;
use PlatformApi\Tests\Support\RecordingTransport;

/**
 * Auto-paging against the real server follows the keyset cursor of `links.next`: a student
 * created during the walk makes it neither repeat nor skip one that was there before.
 */
final class ListCursorLiveTest extends LiveTestCase
{
    public function testAStudentCreatedDuringTheWalkNeitherRepeatsNorSkipsAnother(): void
    {
        $transport = new RecordingTransport();
        $client = self::client(transport: $transport);
        $tag = self::unique('Cur');
        $ids = [];
        for ($i = 0; $i < 7; $i++) {
            $ids[] = self::newStudent($client, ['last_name' => "{$tag} {$i}"])->id;
        }
        $before = count($transport->requests);

        // Newest first: the late student lands before the cursor, where numbered pages would
        // shift every later student by one and repeat one.
        $seen = [];
        $late = null;
        foreach ($client->students->list(['q' => $tag, 'sort' => '-created_at', 'per_page' => 2]) as $student) {
            $seen[] = $student->id;
            if (count($seen) === 2) {
                $late = self::newStudent($client, ['last_name' => "{$tag} late"]);
            }
        }

        self::assertNotNull($late, 'the walk went past its first page');
        self::assertCount(count($seen), array_unique($seen), 'no student seen twice');
        $expected = $ids;
        sort($expected);
        sort($seen);
        self::assertSame($expected, $seen, 'every student created before the walk, once; the late one not');

        $lists = array_values(array_filter(
            array_slice($transport->requests, $before),
            static fn (Request $request): bool => $request->method === 'GET',
        ));
        self::assertCount(4, $lists, '2, 2, 2, 1: the short fourth page has no next');
        foreach (array_slice($lists, 1) as $request) {
            parse_str((string) parse_url($request->url, PHP_URL_QUERY), $query);
            self::assertNotSame('', $query['cursor'] ?? '', "{$request->url} follows a cursor");
            self::assertArrayNotHasKey('page', $query);
            self::assertSame([$tag, '-created_at', '2'], [$query['q'], $query['sort'], $query['per_page']]);
        }
    }
}
