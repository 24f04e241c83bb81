<?php

declare(strict_types=1);

namespace PlatformApi\Core;

/**
 * One page of a list, and the way to every item of every page. `$page->data` holds this page;
 * `foreach ($page as $item)` walks every item of this and the following pages, fetching each next
 * page lazily with the same parameters (only `page` changes). `pages()` walks page by page.
 *
 * @template T
 * @implements \IteratorAggregate<int, T>
 */
final class Page implements \IteratorAggregate
{
    /** @var (\Closure(int): Page<T>)|null */
    private readonly ?\Closure $fetchPage;

    /**
     * @param list<T> $data
     * @param array<string, mixed> $links the API's `links` (`self`, `next`, `prev`, `first`, `last`)
     * @param array<string, mixed> $body the whole list body as received
     * @param (\Closure(int): Page<T>)|null $fetchPage fetches page number n with the same parameters
     */
    public function __construct(
        public readonly array $data,
        /** This page's number, from 1. */
        public readonly int $page,
        public readonly int $perPage,
        /** Items in the whole list (every page), as the server counted them for this page. */
        public readonly int $total,
        public readonly int $totalPages,
        public readonly array $links = [],
        public readonly array $body = [],
        ?\Closure $fetchPage = null,
    ) {
        $this->fetchPage = $fetchPage;
    }

    /**
     * @template I
     * @param RawResponse<mixed> $response
     * @param \Closure(mixed): I $item builds one item from its array
     * @param \Closure(int): Page<I> $fetchPage
     * @return Page<I>
     */
    public static function fromResponse(RawResponse $response, \Closure $item, \Closure $fetchPage): self
    {
        $body = Cast::array(Json::tryDecode($response->body));
        $meta = Cast::array($body['meta'] ?? null);
        return new self(
            Cast::list($body['data'] ?? null, $item),
            Cast::int($meta['page'] ?? 1),
            Cast::int($meta['per_page'] ?? 0),
            Cast::int($meta['total'] ?? 0),
            Cast::int($meta['total_pages'] ?? 0),
            Cast::array($body['links'] ?? null),
            $body,
            $fetchPage,
        );
    }

    /** Whether another page follows: this one is not empty, not the last, and `links.next` is set. */
    public function hasNextPage(): bool
    {
        if ($this->data === [] || $this->fetchPage === null || $this->page >= $this->totalPages) {
            return false;
        }
        return !array_key_exists('next', $this->links) || $this->links['next'] !== null;
    }

    /**
     * The next page, fetched now with the same parameters.
     *
     * @return Page<T>
     */
    public function getNextPage(): self
    {
        if (!$this->hasNextPage() || $this->fetchPage === null) {
            throw new \LogicException('This is the last page: check hasNextPage() first.');
        }
        return ($this->fetchPage)($this->page + 1);
    }

    /**
     * This page and every following one, each fetched when the loop reaches it.
     *
     * @return \Generator<int, Page<T>>
     */
    public function pages(): \Generator
    {
        $page = $this;
        yield $page;
        while ($page->hasNextPage()) {
            $page = $page->getNextPage();
            yield $page;
        }
    }

    /**
     * Every item of this page and the following ones, keyed 0, 1, 2, … across pages (so
     * iterator_to_array() keeps them all).
     *
     * @return \Generator<int, T>
     */
    public function getIterator(): \Generator
    {
        $index = 0;
        foreach ($this->pages() as $page) {
            foreach ($page->data as $item) {
                yield $index++ => $item;
            }
        }
    }

    /** @return array<string, mixed> the list body as received */
    public function toArray(): array
    {
        return $this->body;
    }
}
