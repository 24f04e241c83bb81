<?php

declare(strict_types=1);

namespace PlatformApi\Core;

/**
 * The API's query string conventions: ranges as `created_at[gte]=…`, several values of a filter
 * comma-separated (`status=active,inactive`), booleans as `true`/`false`, dates in RFC 3339 UTC.
 * A parameter given as null is left out.
 */
final class Query
{
    /** @param array<string, mixed> $params */
    public static function build(array $params): string
    {
        $pairs = [];
        foreach ($params as $name => $value) {
            self::add($pairs, (string) $name, $value);
        }
        return implode('&', $pairs);
    }

    /** @param list<string> $pairs */
    private static function add(array &$pairs, string $name, mixed $value): void
    {
        // An empty list filters nothing: leave the parameter out, as the Python client does,
        // rather than send `status=`, which the server refuses as an empty value.
        $nothing = is_array($value) && array_filter($value, static fn ($v) => $v !== null) === [];
        if ($value === null || $nothing) {
            return;
        }
        if (is_array($value) && !array_is_list($value)) {
            foreach ($value as $key => $item) {
                self::add($pairs, "{$name}[{$key}]", $item);
            }
            return;
        }
        if (is_array($value)) {
            $items = array_map(self::scalar(...), array_filter($value, static fn ($v) => $v !== null));
            $value = implode(',', $items);
        } else {
            $value = self::scalar($value);
        }
        // Brackets and commas are left readable; the server decodes the query before reading either.
        $key = strtr(rawurlencode($name), ['%5B' => '[', '%5D' => ']']);
        $pairs[] = $key . '=' . str_replace('%2C', ',', rawurlencode($value));
    }

    private static function scalar(mixed $value): string
    {
        return match (true) {
            is_bool($value) => $value ? 'true' : 'false',
            $value instanceof \DateTimeInterface => Cast::formatDateTime($value),
            $value instanceof \BackedEnum => (string) $value->value,
            is_scalar($value), $value instanceof \Stringable => (string) $value,
            default => throw new \PlatformApi\Exception\InvalidArgumentException(
                'A query parameter must be a string, number, boolean, date or a list of them, got '
                . get_debug_type($value),
            ),
        };
    }
}
