<?php

declare(strict_types=1);

namespace PlatformApi\Core;

/**
 * Turns a response's `Deprecation` header (RFC 9745), `Sunset` (RFC 8594) and
 * `Link; rel="deprecation"` into one E_USER_DEPRECATED per operation and announcement. Driven by
 * the header, so a client generated before the deprecation still tells its user.
 *
 * @internal used by HttpClient
 */
final class Deprecation
{
    /** A public id (`stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8`): a prefix and a ULID. */
    private const ID_SEGMENT = '/^[a-z]+_[0-9A-HJKMNP-TV-Z]{26}$/';

    /** @var array<string, true> announcements already reported by this client */
    private array $warned = [];

    /**
     * Reports the response's deprecation once: trigger_error(…, E_USER_DEPRECATED), which PHP's
     * error handler (or a framework's) logs, shows or turns into an exception as configured.
     *
     * @param array<string, list<string>> $headers names in lower case
     */
    public function warnOnce(string $method, string $url, array $headers): void
    {
        $message = self::message($method, $url, $headers);
        if ($message === null || isset($this->warned[$message])) {
            return;
        }
        $this->warned[$message] = true;
        trigger_error($message, E_USER_DEPRECATED);
    }

    /**
     * The warning for a response, or null when it has no `Deprecation` header. It names the
     * operation (id-like path segments as `{id}`), the dates and the migration notes.
     *
     * @param array<string, list<string>> $headers names in lower case
     */
    public static function message(string $method, string $url, array $headers): ?string
    {
        $deprecation = $headers['deprecation'][0] ?? null;
        if ($deprecation === null) {
            return null;
        }
        $path = parse_url($url, PHP_URL_PATH);
        $segments = explode('/', is_string($path) ? $path : $url);
        foreach ($segments as $i => $segment) {
            if (preg_match(self::ID_SEGMENT, $segment) === 1) {
                $segments[$i] = '{id}';
            }
        }
        $message = "Platform API: {$method} " . implode('/', $segments) . ' uses a deprecated part of the API';
        if (preg_match('/^@(-?\d+)$/', trim($deprecation), $m) === 1) {
            $message .= ' (deprecated since ' . gmdate('Y-m-d', (int) $m[1]) . ')';
        }
        $sunset = isset($headers['sunset'][0]) ? strtotime($headers['sunset'][0]) : false;
        if ($sunset !== false) {
            $message .= '; it may stop working after ' . gmdate('D, d M Y H:i:s', $sunset) . ' GMT';
        }
        $message .= '.';
        $links = self::links($headers['link'] ?? []);
        if ($links !== []) {
            $message .= ' Migration note: ' . implode(' ', $links);
        }
        return $message;
    }

    /**
     * The targets of `Link` values with `rel="deprecation"`.
     *
     * @param list<string> $values
     * @return list<string>
     */
    private static function links(array $values): array
    {
        $links = [];
        foreach ($values as $value) {
            preg_match_all('/<([^>]*)>([^,<]*)/', $value, $matches, PREG_SET_ORDER);
            foreach ($matches as $match) {
                if (preg_match('/;\s*rel="?([^";]*\s)?deprecation[\s";]/i', $match[2] . ';') === 1) {
                    $links[] = $match[1];
                }
            }
        }
        return $links;
    }
}
