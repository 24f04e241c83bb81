<?php

declare(strict_types=1);

namespace PlatformApi\Core;

use PlatformApi\Exception\InvalidArgumentException;

/**
 * A change feed's cursor as the caller may give it: what the feed hands out (a `next_cursor`, an
 * export's or a checksum's `cursor`, an event's `cursor`, a saved `$follower->cursor`), `'0'` for
 * the start of the feed, or `'oldest'`, the oldest change still kept. A cursor is an opaque string
 * bound to its organization, `<position>.<tag>` (e.g. `42.Xk3aB9_-q1`): the number before the dot
 * is the position, the comparable number events carry as `position`, but a position alone is no
 * cursor. Anything else (a position such as `42` or `'42'`, another string) is refused before a
 * request is sent, naming the parameter. Another organization's cursor has the right shape and is
 * refused by the API (a 400 naming `query.after`).
 */
final class Cursor
{
    public const OLDEST = 'oldest';
    public const START = '0';

    /** A cursor as the feed hands it out: a position (no leading zeros, ≤ 18 digits), a dot, a 10-char tag. */
    public const PATTERN = '/^(0|(0|[1-9][0-9]{0,17})\.[A-Za-z0-9_-]{10})$/D';

    /** The cursor as sent on the wire; an InvalidArgumentException naming `$name` when it is none. */
    public static function check(mixed $value, string $name = 'after'): string
    {
        if ($value === 0) {
            return self::START;
        }
        if (is_string($value) && ($value === self::OLDEST || preg_match(self::PATTERN, $value) === 1)) {
            return $value;
        }
        $given = match (true) {
            is_string($value) => '"' . (strlen($value) > 40 ? substr($value, 0, 40) . '…' : $value) . '"',
            is_int($value), is_float($value) => (string) $value,
            default => get_debug_type($value),
        };
        $position = '/^[1-9][0-9]{0,17}$/D';
        if ((is_int($value) && $value > 0) || (is_string($value) && preg_match($position, $value) === 1)) {
            throw new InvalidArgumentException(
                "{$name} must be a cursor, not a position: cursors are opaque strings such as \"42.Xk3aB9_-q1\", "
                . "bound to the organization. Pass a next_cursor, an export's cursor or an event's cursor, "
                . "not its position ('0' is the start of the feed, 'oldest' the oldest change kept); got {$given}.",
            );
        }
        throw new InvalidArgumentException(
            "{$name} must be a cursor: an opaque string the feed handed out (a next_cursor, an export's cursor, "
            . "an event's cursor, a saved follower cursor), '0' for the start of the feed, or 'oldest'; "
            . "got {$given}.",
        );
    }

    /**
     * The query of a feed read with its `after` and `until` checked (when given).
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
