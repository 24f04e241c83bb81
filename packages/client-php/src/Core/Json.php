<?php

declare(strict_types=1);

namespace PlatformApi\Core;

use PlatformApi\Exception\InvalidArgumentException;

/**
 * JSON in and out. Request bodies keep "absent" and "null" apart (a key given as null is sent as
 * null, a key left out is not sent) and keep JSON objects objects: PHP's empty array would
 * otherwise go out as `[]` where the API expects `{}`.
 */
final class Json
{
    public const ENCODE_FLAGS = JSON_THROW_ON_ERROR | JSON_PRESERVE_ZERO_FRACTION
        | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE;

    /**
     * Encodes a request body.
     *
     * @param array<array-key, mixed>|object $params
     * @param list<string> $objectPaths where the schema has a JSON object: `''` is the body itself,
     *     `owner` a field, `items.*` each element of a list; an empty PHP array there becomes `{}`
     */
    public static function encodeBody(array|object $params, array $objectPaths = ['']): string
    {
        return self::encode(self::prepare($params, '', array_fill_keys($objectPaths, true)));
    }

    public static function encode(mixed $value): string
    {
        try {
            return json_encode($value, self::ENCODE_FLAGS);
        } catch (\JsonException $e) {
            $message = 'The request body cannot be encoded as JSON: ' . $e->getMessage();
            throw new InvalidArgumentException($message, 0, $e);
        }
    }

    /**
     * Decodes a response body into arrays (objects become associative arrays).
     *
     * @throws \JsonException
     */
    public static function decode(string $json): mixed
    {
        return json_decode($json, true, 512, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
    }

    /** The decoded JSON, or null when the text is not JSON. */
    public static function tryDecode(string $json): mixed
    {
        if ($json === '') {
            return null;
        }
        try {
            return self::decode($json);
        } catch (\JsonException) {
            return null;
        }
    }

    /**
     * Dates to RFC 3339 UTC strings, backed enums to their values, SDK models to their payload,
     * and arrays at object paths to objects.
     *
     * @param array<string, true> $objectPaths
     */
    public static function prepare(mixed $value, string $path, array $objectPaths): mixed
    {
        if ($value instanceof \DateTimeInterface) {
            return Cast::formatDateTime($value);
        }
        if ($value instanceof \BackedEnum) {
            return $value->value;
        }
        if ($value instanceof Model) {
            $value = $value->toArray();
        }
        if (!is_array($value)) {
            return $value;
        }
        $isObject = isset($objectPaths[$path]);
        $list = !$isObject && array_is_list($value);
        $out = [];
        foreach ($value as $key => $item) {
            $child = $list ? $path . ($path === '' ? '*' : '.*') : ($path === '' ? (string) $key : "{$path}.{$key}");
            $out[$key] = self::prepare($item, $child, $objectPaths);
        }
        // (object) keeps numeric keys as members ("0": …) where a list would lose them.
        return $isObject ? (object) $out : $out;
    }
}
