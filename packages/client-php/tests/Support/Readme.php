<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Support;

/** Code blocks of the README, found by the HTML comment that precedes them. */
final class Readme
{
    public const FILE = __DIR__ . '/../../README.md';

    /** The first fenced block after the line starting with `<!-- $marker`. */
    public static function blockAfter(string $marker): string
    {
        $readme = (string) file_get_contents(self::FILE);
        $at = strpos($readme, "<!-- {$marker}");
        if ($at === false) {
            throw new \RuntimeException("README.md has no <!-- {$marker} marker");
        }
        if (preg_match('/```php\n(.*?)\n```/s', $readme, $m, 0, $at) !== 1) {
            throw new \RuntimeException("README.md has no php block after <!-- {$marker}");
        }
        return $m[1] . "\n";
    }
}
