<?php

declare(strict_types=1);

namespace PlatformApi\Core;

/**
 * One page of a list, and the way to every item of every page. `$page->data` holds this page;
 * `foreach ($page as $item)` walks every item of this and the following pages, fetching each next
 * page lazily with the same parameters. The next page is the keyset `cursor` that `links.next`
 * carries (in place of `page`), so records added or removed during the walk never make it skip or
 * repeat one; a server that sends no cursor is paged by number. `pages()` walks page by page.
 *
 * @template T
 * @implements \IteratorAggregate<int, T>
 */
final class Page implements \IteratorAggregate
{
    /** @var (\Closure(int): Page<T>)|null */
    private readonly ?\Closure $fetchPage;

    /** @var (\Closure(string): Page<T>)|null */
    private readonly ?\Closure $fetchCursor;

    /**
     * @param list<T> $data
     * @param array<string, mixed> $links the API's `links` (`self`, `next`, `prev`, `first`, `last`)
     * @param array<string, mixed> $body the whole list body as received
     * @param (\Closure(int): Page<T>)|null $fetchPage fetches page number n with the same parameters
     * @param (\Closure(string): Page<T>)|null $fetchCursor fetches the page after a `links.next`
     *     cursor with the same parameters (`cursor` in place of `page`)
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
        ?\Closure $fetchCursor = null,
    ) {
        $this->fetchPage = $fetchPage;
        $this->fetchCursor = $fetchCursor;
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
            self::cursorFetcher($response),
        );
    }

    /**
     * Fetches the page after a cursor: the response's request again with `cursor` in place of
     * `page` (and of the cursor it had), every filter, the sort and `per_page` kept.
     *
     * @param RawResponse<mixed> $response
     * @return (\Closure(string): Page<mixed>)|null
     */
    private static function cursorFetcher(RawResponse $response): ?\Closure
    {
        if (!$response->canResend()) {
            return null;
        }
        return static function (string $cursor) use ($response): Page {
            $next = $response->resend(
                static fn (array $query): array => ['cursor' => $cursor] + array_diff_key($query, ['page' => 0]),
            );
            return $next->parse();
        };
    }

    /**
     * Whether another page follows: this one is not empty and `links.next` is set. Without a
     * cursor in `links.next` (a server that pages by number only), also not the last page.
     */
    public function hasNextPage(): bool
    {
        if ($this->data === [] || (array_key_exists('next', $this->links) && $this->links['next'] === null)) {
            return false;
        }
        if ($this->fetchCursor !== null && $this->nextCursor() !== null) {
            return true;
        }
        return $this->fetchPage !== null && $this->page < $this->totalPages;
    }

    /**
     * The next page, fetched now with the same parameters.
     *
     * @return Page<T>
     */
    public function getNextPage(): self
    {
        if (!$this->hasNextPage()) {
            throw new \LogicException('This is the last page: check hasNextPage() first.');
        }
        $cursor = $this->nextCursor();
        if ($cursor !== null && $this->fetchCursor !== null) {
            return ($this->fetchCursor)($cursor);
        }
        if ($this->fetchPage === null) {
            throw new \LogicException('This page cannot fetch the next one.');
        }
        return ($this->fetchPage)($this->page + 1);
    }

    /** The `cursor` query parameter of `links.next`, or null when it has none. */
    private function nextCursor(): ?string
    {
        $next = $this->links['next'] ?? null;
        $query = is_string($next) ? parse_url($next, PHP_URL_QUERY) : null;
        if (!is_string($query)) {
            return null;
        }
        foreach (explode('&', $query) as $pair) {
            [$name, $value] = explode('=', $pair, 2) + [1 => ''];
            if (urldecode($name) === 'cursor' && $value !== '') {
                return urldecode($value);
            }
        }
        return null;
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
