<?php

declare(strict_types=1);

namespace PlatformApi\Core;

/**
 * Base of every generated model. Models are lenient: `fromArray()` never throws on unexpected
 * data, keeps every key it was given (also those this SDK version does not know), and
 * `toArray()` gives that payload back unchanged. Unknown keys are readable as `$model['key']`.
 *
 * @implements \ArrayAccess<string, mixed>
 */
abstract class Model implements \ArrayAccess, \JsonSerializable
{
    /** @var array<string, mixed>|null The payload as received, when built by fromArray(). */
    protected ?array $sdkPayload = null;

    /**
     * Builds the model from a decoded payload, leniently.
     *
     * @param array<array-key, mixed> $data
     */
    abstract public static function fromArray(array $data): static;

    /** @return array<string, mixed> */
    abstract public function toArray(): array;

    /**
     * Where the schema has a JSON object (`''` the model itself), so that encoding restores `{}`
     * for an empty one; see Json::encodeBody().
     *
     * @return list<string>
     */
    public static function objectPaths(): array
    {
        return [''];
    }

    public function offsetExists(mixed $offset): bool
    {
        return array_key_exists((string) $offset, $this->toArray());
    }

    public function offsetGet(mixed $offset): mixed
    {
        return $this->toArray()[(string) $offset] ?? null;
    }

    public function offsetSet(mixed $offset, mixed $value): never
    {
        throw new \LogicException(static::class . ' is immutable: build a new array from toArray() instead.');
    }

    public function offsetUnset(mixed $offset): never
    {
        throw new \LogicException(static::class . ' is immutable: build a new array from toArray() instead.');
    }

    /** The JSON the API sent (or would send), with `{}` kept for empty objects. */
    public function jsonSerialize(): mixed
    {
        return Json::prepare($this->toArray(), '', array_fill_keys(static::objectPaths(), true));
    }
}
