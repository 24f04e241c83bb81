<?php

declare(strict_types=1);

namespace PlatformApi\Core;

/**
 * Lenient conversions the generated `fromArray()` methods use: a response is never validated, so
 * a value of an unexpected type becomes the type's empty value instead of an error (the original
 * stays available through `toArray()`). A newer server must never break an older client.
 */
final class Cast
{
    public static function string(mixed $value): string
    {
        return is_string($value) ? $value : (is_scalar($value) ? (string) $value : '');
    }

    public static function nullableString(mixed $value): ?string
    {
        return $value === null ? null : self::string($value);
    }

    public static function int(mixed $value): int
    {
        return match (true) {
            is_int($value) => $value,
            is_float($value) && is_finite($value) => (int) $value,
            is_string($value) && is_numeric($value) => (int) $value,
            is_bool($value) => (int) $value,
            default => 0,
        };
    }

    public static function nullableInt(mixed $value): ?int
    {
        return $value === null ? null : self::int($value);
    }

    public static function float(mixed $value): float
    {
        return is_int($value) || is_float($value) || (is_string($value) && is_numeric($value)) ? (float) $value : 0.0;
    }

    public static function nullableFloat(mixed $value): ?float
    {
        return $value === null ? null : self::float($value);
    }

    public static function bool(mixed $value): bool
    {
        return is_bool($value) ? $value : ($value === 1 || $value === 'true');
    }

    public static function nullableBool(mixed $value): ?bool
    {
        return $value === null ? null : self::bool($value);
    }

    /** An RFC 3339 date-time; the Unix epoch when the value is not one (the raw string stays in toArray()). */
    public static function dateTime(mixed $value): \DateTimeImmutable
    {
        return self::nullableDateTime($value) ?? new \DateTimeImmutable('@0');
    }

    public static function nullableDateTime(mixed $value): ?\DateTimeImmutable
    {
        if (!is_string($value) || $value === '') {
            return null;
        }
        try {
            return new \DateTimeImmutable($value);
        } catch (\Exception) {
            return null;
        }
    }

    /** `2026-01-01T00:00:00.000Z`: UTC with milliseconds, as the API writes date-times. */
    public static function formatDateTime(\DateTimeInterface $value): string
    {
        return \DateTimeImmutable::createFromInterface($value)
            ->setTimezone(new \DateTimeZone('UTC'))
            ->format('Y-m-d\TH:i:s.v\Z');
    }

    /**
     * Null stays null; anything else goes through `$cast`.
     *
     * @template T
     * @param \Closure(mixed): T $cast
     * @return T|null
     */
    public static function orNull(mixed $value, \Closure $cast): mixed
    {
        return $value === null ? null : $cast($value);
    }

    /** @return array<array-key, mixed> */
    public static function array(mixed $value): array
    {
        return is_array($value) ? $value : [];
    }

    /**
     * @template T
     * @param \Closure(mixed): T $item
     * @return list<T>
     */
    public static function list(mixed $value, \Closure $item): array
    {
        return is_array($value) ? array_values(array_map($item, $value)) : [];
    }

    /**
     * @template T
     * @param \Closure(mixed): T $item
     * @return array<string, T>
     */
    public static function map(mixed $value, \Closure $item): array
    {
        return is_array($value) ? array_map($item, $value) : [];
    }

    /**
     * @template T of Model
     * @param class-string<T> $class
     * @return T
     */
    public static function model(mixed $value, string $class): Model
    {
        /** @var T */
        return $class::fromArray(is_array($value) ? $value : []);
    }

    /**
     * @template T of Model
     * @param class-string<T> $class
     * @return list<T>
     */
    public static function modelList(mixed $value, string $class): array
    {
        return self::list($value, static fn (mixed $item): Model => self::model($item, $class));
    }

    /**
     * @template T of Model
     * @param class-string<T> $class
     * @return array<string, T>
     */
    public static function modelMap(mixed $value, string $class): array
    {
        return self::map($value, static fn (mixed $item): Model => self::model($item, $class));
    }

    /**
     * A property back to its JSON value: models to arrays, date-times to RFC 3339 UTC strings.
     */
    public static function serialize(mixed $value): mixed
    {
        return match (true) {
            $value instanceof Model => $value->toArray(),
            $value instanceof \DateTimeInterface => self::formatDateTime($value),
            is_array($value) => array_map(self::serialize(...), $value),
            default => $value,
        };
    }

    /**
     * @template T of Model
     * @param class-string<T> $class
     * @return T|null
     */
    public static function nullableModel(mixed $value, string $class): ?Model
    {
        return $value === null ? null : self::model($value, $class);
    }
}
