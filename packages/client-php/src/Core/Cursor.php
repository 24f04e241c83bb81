<?php

declare(strict_types=1);

namespace PlatformApi\Core;

use PlatformApi\Exception\InvalidArgumentException;

/**
 * A change feed's cursor as the caller may give it: what the feed hands out (a position as an int,
 * or a `next_cursor` / `$follower->cursor` string of digits) or `'oldest'`, the oldest change still
 * kept. Anything else is refused before a request is sent, naming the parameter.
 */
final class Cursor
{
    public const OLDEST = 'oldest';

    /** The cursor as sent on the wire; an InvalidArgumentException naming `$name` when it is none. */
    public static function check(mixed $value, string $name = 'after'): string
    {
        // A position as the server takes it: no leading zeros, at most 18 digits.
        $position = '/^(0|[1-9][0-9]{0,17})$/D';
        if (is_int($value) && preg_match($position, (string) $value) === 1) {
            return (string) $value;
        }
        if (is_string($value) && ($value === self::OLDEST || preg_match($position, $value) === 1)) {
            return $value;
        }
        $given = match (true) {
            is_string($value) => '"' . (strlen($value) > 40 ? substr($value, 0, 40) . '…' : $value) . '"',
            is_int($value), is_float($value) => (string) $value,
            default => get_debug_type($value),
        };
        throw new InvalidArgumentException(
            "{$name} must be a cursor: a non-negative integer position, its decimal string "
            . "(a next_cursor, an export's cursor, a saved follower cursor) or 'oldest'; got {$given}.",
        );
    }

    /**
     * The query of a feed read with its `after` checked (when given).
     *
     * @template Q of array<string, mixed>
     * @param Q $query
     * @return Q
     */
    public static function inQuery(array $query): array
    {
        if (array_key_exists('after', $query)) {
            $query['after'] = self::check($query['after']);
        }
        if (array_key_exists('until', $query)) {
            $query['until'] = self::check($query['until'], 'until');
        }
        return $query;
    }
}
