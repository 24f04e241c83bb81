<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Unit;

use PHPUnit\Framework\TestCase;
use PlatformApi\Core\Page;
use PlatformApi\Model\PaymentCreatedEvent;
use PlatformApi\Model\Student;
use PlatformApi\Model\UnknownEvent;
use PlatformApi\Tests\Support\ClientFactory;
use PlatformApi\Tests\Support\FakeTransport;
use PlatformApi\Tests\Support\Fixtures;

final class PaginationTest extends TestCase
{
    use ClientFactory;

    private function threePages(): void
    {
        $this->script(
            FakeTransport::json(200, Fixtures::page([Fixtures::student('stu_1'), Fixtures::student('stu_2')], 1, 2, 5)),
            FakeTransport::json(200, Fixtures::page([Fixtures::student('stu_3'), Fixtures::student('stu_4')], 2, 2, 5)),
            FakeTransport::json(200, Fixtures::page([Fixtures::student('stu_5')], 3, 2, 5)),
        );
    }

    public function testIteratingAPageWalksEveryItemOfEveryPageWithTheSameParameters(): void
    {
        $this->threePages();
        $params = ['status' => 'active', 'created_at' => ['gte' => '2026-01-01T00:00:00Z'], 'per_page' => 2];
        $page = $this->client()->students->list($params);
        self::assertCount(2, $page->data, '->data is this page only');
        self::assertSame([1, 2, 5, 3], [$page->page, $page->perPage, $page->total, $page->totalPages]);

        $ids = [];
        foreach ($page as $student) {
            self::assertInstanceOf(Student::class, $student);
            $ids[] = $student->id;
        }
        self::assertSame(['stu_1', 'stu_2', 'stu_3', 'stu_4', 'stu_5'], $ids);
        $urls = array_map(static fn ($r) => $r->url, $this->transport->requests);
        $query = 'status=active&created_at[gte]=2026-01-01T00%3A00%3A00Z&per_page=2';
        self::assertSame([
            "https://api.school.test/v1/students?{$query}",
            "https://api.school.test/v1/students?page=2&{$query}",
            "https://api.school.test/v1/students?page=3&{$query}",
        ], $urls);
    }

    public function testIteratorToArrayKeepsEveryItem(): void
    {
        // Keys run on across pages; restarting at 0 per page would overwrite items.
        $this->threePages();
        $all = iterator_to_array($this->client()->students->list(['per_page' => 2]));
        self::assertSame([0, 1, 2, 3, 4], array_keys($all));
    }

    public function testPagesAreFetchedLazily(): void
    {
        $this->threePages();
        foreach ($this->client()->students->list(['per_page' => 2]) as $student) {
            break;
        }
        self::assertCount(1, $this->transport->requests);
    }

    public function testPagesWalksPageByPage(): void
    {
        $this->threePages();
        $first = $this->client()->students->list(['per_page' => 2]);
        $sizes = [];
        foreach ($first->pages() as $page) {
            $sizes[$page->page] = count($page->data);
        }
        self::assertSame([1 => 2, 2 => 2, 3 => 1], $sizes);
        self::assertFalse($page->hasNextPage());
        $this->expectException(\LogicException::class);
        $page->getNextPage();
    }

    public function testAnEmptyPageEndsTheWalk(): void
    {
        // total says more, but an empty page must not loop forever.
        $this->script(FakeTransport::json(200, Fixtures::page([], 1, 25, 40)));
        $page = $this->client()->students->list();
        self::assertFalse($page->hasNextPage());
        self::assertSame([], iterator_to_array($page));
        self::assertCount(1, $this->transport->requests);
    }

    public function testTheLastPageRequestsNothingMore(): void
    {
        $this->script(FakeTransport::json(200, Fixtures::page([Fixtures::student()], 4, 10, 31)));
        $page = $this->client()->students->list(['page' => 4, 'per_page' => 10]);
        self::assertCount(1, iterator_to_array($page));
        self::assertCount(1, $this->transport->requests);
    }

    public function testANullNextLinkEndsTheWalk(): void
    {
        $body = Fixtures::page([Fixtures::student()], 1, 1, 3);
        $body['links']['next'] = null;
        $this->script(FakeTransport::json(200, $body));
        self::assertCount(1, iterator_to_array($this->client()->students->list()));
    }

    public function testANestedListKeepsItsPathParameterOnEveryPage(): void
    {
        $delivery = static fn (string $id) => ['id' => $id, 'object' => 'webhook_delivery', 'status' => 'failed'];
        $this->script(
            FakeTransport::json(200, Fixtures::page([$delivery('msg_1')], 1, 1, 2)),
            FakeTransport::json(200, Fixtures::page([$delivery('msg_2')], 2, 1, 2)),
        );
        $ids = [];
        foreach ($this->client()->webhookEndpoints->deliveries('we_9', ['status' => 'failed', 'per_page' => 1]) as $d) {
            $ids[] = $d->id;
        }
        self::assertSame(['msg_1', 'msg_2'], $ids);
        self::assertSame(
            'https://api.school.test/v1/webhook_endpoints/we_9/deliveries?page=2&status=failed&per_page=1',
            $this->transport->requests[1]->url,
        );
    }

    public function testAListOfEventsIsTypedPerItemAndKeepsUnknownTypes(): void
    {
        $this->script(FakeTransport::json(200, Fixtures::page([
            ['id' => 'evt_1', 'object' => 'event', 'type' => 'payment.created',
                'timestamp' => '2026-01-01T00:00:00.000Z', 'api_version' => 'v1',
                'data' => ['id' => 'pay_1', 'object' => 'payment', 'amount' => 1250]],
            ['id' => 'evt_2', 'object' => 'event', 'type' => 'library.book_lent', 'data' => ['id' => 'bk_1']],
        ], 1, 25, 2)));
        $events = iterator_to_array($this->client()->events->list());
        self::assertInstanceOf(PaymentCreatedEvent::class, $events[0]);
        self::assertSame(1250, $events[0]->data->amount);
        self::assertInstanceOf(UnknownEvent::class, $events[1]);
        self::assertSame('library.book_lent', $events[1]->eventType());
        self::assertSame(['id' => 'bk_1'], $events[1]->data);
    }

    public function testAPageHoldsTheBodyAsReceived(): void
    {
        $body = Fixtures::page([Fixtures::student()], 1, 25, 1) + ['cursor' => 'future'];
        $this->script(FakeTransport::json(200, $body));
        $page = $this->client()->students->list();
        self::assertInstanceOf(Page::class, $page);
        self::assertSame('future', $page->toArray()['cursor']);
        self::assertSame('/v1/students?page=1', $page->links['self']);
    }
}
