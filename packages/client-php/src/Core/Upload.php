<?php

declare(strict_types=1);

namespace PlatformApi\Core;

/**
 * A file sent as the body of an upload (`$client->imports->create(Upload::fromPath(...), [...])`):
 * one multipart part named `file`. Read whole before sending (once, however many times the call
 * is retried).
 */
final class Upload
{
    private const TYPES = ['csv' => 'text/csv', 'ndjson' => 'application/x-ndjson'];

    private function __construct(
        public readonly string $contents,
        public readonly string $filename,
        public readonly ?string $contentType,
    ) {
    }

    /** The file at `$path`, sent under its own name (its extension tells the format). */
    public static function fromPath(string $path, ?string $contentType = null): self
    {
        $contents = @file_get_contents($path);
        if ($contents === false) {
            throw new \InvalidArgumentException("Cannot read the file {$path}");
        }
        return new self($contents, basename($path), $contentType);
    }

    /** Bytes already in memory, sent as `$filename` (`students.csv`: its extension tells the format). */
    public static function fromString(string $contents, string $filename, ?string $contentType = null): self
    {
        return new self($contents, $filename, $contentType);
    }

    /**
     * The multipart body and its Content-Type, with a fresh boundary; `$format` (`csv`, `ndjson`),
     * when the call names one, types the part.
     *
     * @return array{0: string, 1: string}
     */
    public function encode(?string $format = null): array
    {
        $boundary = bin2hex(random_bytes(16));
        $type = $this->contentType
            ?? ($format !== null && isset(self::TYPES[$format]) ? self::TYPES[$format] : null)
            ?? (str_ends_with($this->filename, '.csv') ? 'text/csv' : null)
            ?? (preg_match('/\.(ndjson|jsonl)$/', $this->filename) === 1 ? 'application/x-ndjson' : null)
            ?? 'application/octet-stream';
        $name = str_replace(['"', "\r", "\n"], ['%22', '', ''], $this->filename);
        $body = "--{$boundary}\r\n"
            . "Content-Disposition: form-data; name=\"file\"; filename=\"{$name}\"\r\n"
            . "Content-Type: {$type}\r\n\r\n"
            . $this->contents
            . "\r\n--{$boundary}--\r\n";
        return [$body, "multipart/form-data; boundary={$boundary}"];
    }
}
