<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PlatformApi\Tests\Support\Readme;

/** The README's quickstart, run as a user would run it, against the live server: it cannot rot. */
final class ReadmeTest extends LiveTestCase
{
    public function testTheQuickstartRuns(): void
    {
        $code = Readme::blockAfter('test: quickstart');
        $root = dirname(__DIR__, 2);
        $file = tempnam(sys_get_temp_dir(), 'quickstart-') . '.php';
        file_put_contents($file, $code);
        try {
            $env = [
                'PLATFORM_TOKEN' => self::env('PLATFORM_TOKEN'),
                'PLATFORM_BASE_URL' => self::env('PLATFORM_BASE_URL'),
            ];
            // From the package root, so `require 'vendor/autoload.php'` finds the autoloader as in a project.
            $process = proc_open([PHP_BINARY, $file], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, $root, $env);
            self::assertIsResource($process);
            $out = (string) stream_get_contents($pipes[1]);
            $err = (string) stream_get_contents($pipes[2]);
            $status = proc_close($process);
        } finally {
            unlink($file);
        }
        self::assertSame(0, $status, "the quickstart failed:\n{$out}\n{$err}");
        self::assertSame('', $err);
        self::assertMatchesRegularExpression('/^Created stu_[0-9A-Z]{26} \(active\)$/m', $out);
        self::assertMatchesRegularExpression('/^stu_[0-9A-Z]{26} Lovelace, Ada$/m', $out);
        self::assertMatchesRegularExpression('/^Not found: not_found \(request req_\w+\)$/m', $out);
    }
}
