<?php

declare(strict_types=1);

namespace PlatformApi\Exception;

/** One offending parameter of a 400 answer: an item of the problem document's `errors[]`. */
final class FieldError
{
    public function __construct(
        /** Where the problem is, e.g. `query.per_page` or `body.email`. */
        public readonly string $path,
        public readonly string $message,
        /** Machine-readable reason, when the server sent one (`too_small`, `invalid_string`, …). */
        public readonly ?string $code = null,
    ) {
    }
}
