<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Unit;

use PHPUnit\Framework\TestCase;
use PlatformApi\PlatformClient;
use PlatformApi\Tests\Support\Fixtures;
use PlatformApi\Tests\Support\ScriptedServer;

/**
 * Auto-paging follows the keyset cursor of `links.next`, over a real socket: a scripted `php -S`
 * on 127.0.0.1 answers as the Platform server pages a list (an unscripted request gets a 500, so
 * a walk that asks for one page too many fails).
 */
final class CursorPaginationTest extends TestCase
{
    private const CURSOR_1 = 'WzIsIi1jcmVhdGVkX2F0Il0.Xk3aB9_-q1';
    private const CURSOR_2 = 'WzMsIi1jcmVhdGVkX2F0Il0.Yk3aB9_-q2';

    private ScriptedServer $server;

    protected function setUp(): void
    {
        $this->server = new ScriptedServer();
    }

    protected function tearDown(): void
    {
        $this->server->stop();
    }

    /**
     * Scripts one list page; `$next` is the query of `links.next` (null: no next page).
     *
     * @param list<string> $ids
     */
    private function answer(array $ids, int $page, int $total, ?string $next, string $path = '/v1/students'): void
    {
        $body = Fixtures::page(array_map(static fn (string $id) => Fixtures::student($id), $ids), $page, 2, $total);
        $body['links']['next'] = $next === null ? null : "{$this->server->url}{$path}?{$next}";
        $this->server->script([
            'status' => 200,
            'headers' => ['Content-Type' => 'application/json'],
            'body' => json_encode($body),
        ]);
    }

    private function client(): PlatformClient
    {
        return new PlatformClient(token: 'pat_test', baseUrl: $this->server->url);
    }

    /** @return list<string> the request URIs the server received */
    private function uris(): array
    {
        return array_map(static fn (array $r): string => $r['uri'], $this->server->requests());
    }

    public function testIteratingSendsTheCursorOfLinksNextWithTheCallersParametersAndNoPage(): void
    {
        $query = 'status=active&sort=last_name&created_at[gte]=2026-01-01T00%3A00%3A00Z&per_page=2';
        $this->answer(['stu_1', 'stu_2'], 1, 5, "{$query}&cursor=" . self::CURSOR_1);
        $this->answer(['stu_3', 'stu_4'], 2, 5, "{$query}&cursor=" . self::CURSOR_2);
        $this->answer(['stu_5'], 3, 5, null);

        $page = $this->client()->students->list([
            'status' => 'active',
            'sort' => 'last_name',
            'created_at' => ['gte' => '2026-01-01T00:00:00Z'],
            'per_page' => 2,
        ]);
        $ids = array_map(static fn ($s) => $s->id, iterator_to_array($page));

        self::assertSame(['stu_1', 'stu_2', 'stu_3', 'stu_4', 'stu_5'], $ids);
        self::assertSame([
            "/v1/students?{$query}",
            '/v1/students?cursor=' . self::CURSOR_1 . "&{$query}",
            '/v1/students?cursor=' . self::CURSOR_2 . "&{$query}",
        ], $this->uris(), 'the null next of the third page ends the walk');
    }

    public function testAStartingPageIsDroppedOnceACursorLeadsOn(): void
    {
        $this->answer(['stu_3', 'stu_4'], 2, 6, 'per_page=2&cursor=' . self::CURSOR_1);
        $this->answer(['stu_5', 'stu_6'], 3, 6, null);

        $first = $this->client()->students->list(['page' => 2, 'per_page' => 2]);
        self::assertTrue($first->hasNextPage());
        $second = $first->getNextPage();

        self::assertSame(['stu_5', 'stu_6'], array_map(static fn ($s) => $s->id, $second->data));
        self::assertSame(3, $second->page, 'meta.page of a cursor page is its number');
        self::assertFalse($second->hasNextPage());
        self::assertSame(
            ['/v1/students?page=2&per_page=2', '/v1/students?cursor=' . self::CURSOR_1 . '&per_page=2'],
            $this->uris(),
        );
    }

    public function testACursorIsFollowedPastTheTotalAndAnEmptyPageEndsTheWalk(): void
    {
        // Records deleted during the walk: the total shrank below the page number, but a full
        // page under a cursor always has a next (which may be empty).
        $this->answer(['stu_1', 'stu_2'], 1, 2, 'per_page=2&cursor=' . self::CURSOR_1);
        $this->answer([], 2, 2, null);

        $raw = $this->client()->students->raw->list(['per_page' => 2])->parse();
        $pages = iterator_to_array($raw->pages(), false);

        self::assertCount(2, $pages);
        self::assertSame([], $pages[1]->data);
        self::assertSame('/v1/students?cursor=' . self::CURSOR_1 . '&per_page=2', $this->uris()[1]);
    }

    public function testANestedListKeepsItsPathAndFiltersUnderACursor(): void
    {
        $path = '/v1/webhook_endpoints/we_9/deliveries';
        $this->answer(['msg_1', 'msg_2'], 1, 3, 'status=failed&per_page=2&cursor=' . self::CURSOR_1, $path);
        $this->answer(['msg_3'], 2, 3, null, $path);

        $page = $this->client()->webhookEndpoints->deliveries('we_9', ['status' => 'failed', 'per_page' => 2]);

        self::assertCount(3, iterator_to_array($page));
        self::assertSame("{$path}?cursor=" . self::CURSOR_1 . '&status=failed&per_page=2', $this->uris()[1]);
    }

    public function testANextLinkWithoutACursorIsPagedByNumber(): void
    {
        // A server from before cursors: links.next names page 2.
        $this->answer(['stu_1', 'stu_2'], 1, 3, 'status=active&per_page=2&page=2');
        $this->answer(['stu_3'], 2, 3, null);

        $ids = array_map(
            static fn ($s) => $s->id,
            iterator_to_array($this->client()->students->list(['status' => 'active', 'per_page' => 2])),
        );

        self::assertSame(['stu_1', 'stu_2', 'stu_3'], $ids);
        self::assertSame(
            ['/v1/students?status=active&per_page=2', '/v1/students?page=2&status=active&per_page=2'],
            $this->uris(),
        );
    }
}
