<?php

declare(strict_types=1);

// The autoloader comes from `composer dump-autoload` (offline; no package is installed).
$autoload = __DIR__ . '/../vendor/autoload.php';
if (!is_file($autoload)) {
    fwrite(STDERR, "Run `composer dump-autoload` in packages/client-php first.\n");
    exit(1);
}
require $autoload;
