<?php

declare(strict_types=1);

namespace PlatformApi\Webhook;

/**
 * A verified webhook event: one of the generated `PlatformApi\Model\*Event` classes (narrow with
 * `instanceof`, or switch on `eventType()`), or UnknownEvent for a type this SDK does not know.
 */
interface EventInterface
{
    /** The event's `type`, e.g. `student.created`. */
    public function eventType(): string;

    /** @return array<string, mixed> the event as received, unknown keys included */
    public function toArray(): array;
}
