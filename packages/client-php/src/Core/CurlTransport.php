<?php

declare(strict_types=1);

namespace PlatformApi\Core;

use PlatformApi\Exception\ApiConnectionException;
use PlatformApi\Exception\ApiTimeoutException;

/**
 * The default transport: ext-curl, one handle reused across requests (keep-alive), millisecond
 * timeouts, no redirects, compressed responses accepted, proxies from the usual environment
 * variables (curl reads `https_proxy`, `no_proxy`, …) and the system's CA store.
 */
final class CurlTransport implements Transport
{
    private ?\CurlHandle $handle = null;

    /**
     * @param array<int, mixed> $curlOptions extra `CURLOPT_*` options applied to every request
     *     (e.g. `[CURLOPT_PROXY => 'http://proxy:3128']` or `[CURLOPT_CAINFO => '/path/ca.pem']`)
     */
    public function __construct(private readonly array $curlOptions = [])
    {
    }

    public function send(Request $request): Response
    {
        $handle = $this->handle ??= curl_init();
        curl_reset($handle);

        $headers = [];
        foreach ($request->headers as $name => $value) {
            $headers[] = "{$name}: {$value}";
        }
        // curl sends `Expect: 100-continue` for larger bodies and waits for an answer the server
        // may never give; an empty value turns it off (as stripe-php does).
        $headers[] = 'Expect:';
        if ($request->body === null && !isset($request->headers['content-type'])) {
            // Otherwise curl labels an empty POST application/x-www-form-urlencoded.
            $headers[] = 'Content-Type:';
        }

        $responseHeaders = [];
        $options = [
            CURLOPT_URL => $request->url,
            CURLOPT_CUSTOMREQUEST => $request->method,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_HTTPHEADER => $headers,
            CURLOPT_HEADERFUNCTION => static function ($_, string $line) use (&$responseHeaders): int {
                if (preg_match('#^HTTP/\S+\s+\d{3}#', $line) === 1) {
                    $responseHeaders = []; // an interim 1xx response came first: keep the final one's headers
                } elseif (str_contains($line, ':')) {
                    [$name, $value] = explode(':', $line, 2);
                    $responseHeaders[strtolower(trim($name))][] = trim($value);
                }
                return strlen($line);
            },
            CURLOPT_TIMEOUT_MS => max(1, (int) ceil($request->timeout * 1000)),
            CURLOPT_CONNECTTIMEOUT_MS => max(1, (int) ceil($request->connectTimeout * 1000)),
            CURLOPT_FOLLOWLOCATION => false,
            // http too: local servers and test servers on loopback are plain http. No redirect is
            // followed, so a response can never move the request (and its token) elsewhere.
            CURLOPT_PROTOCOLS => CURLPROTO_HTTPS | CURLPROTO_HTTP,
            CURLOPT_ENCODING => '',
            // Without it, curl's DNS timeouts use SIGALRM, which sub-second timeouts break.
            CURLOPT_NOSIGNAL => true,
        ];
        if ($request->method === 'HEAD') {
            $options[CURLOPT_NOBODY] = true;
        } elseif ($request->body !== null) {
            $options[CURLOPT_POSTFIELDS] = $request->body;
        } elseif (in_array($request->method, ['POST', 'PUT', 'PATCH'], true)) {
            $options[CURLOPT_POSTFIELDS] = ''; // sends Content-Length: 0
        }
        $errorBody = '';
        if ($request->sink !== null) {
            // Streams a 2xx body to the sink chunk by chunk (bounded memory); the status is known
            // once the headers are in, so an error answer is still buffered for its problem+json.
            $sink = $request->sink;
            $options[CURLOPT_RETURNTRANSFER] = false;
            $options[CURLOPT_WRITEFUNCTION] = static function ($h, string $chunk) use ($sink, &$errorBody): int {
                $status = (int) curl_getinfo($h, CURLINFO_RESPONSE_CODE);
                if ($status >= 200 && $status < 300) {
                    $sink($chunk);
                } else {
                    $errorBody .= $chunk;
                }
                return strlen($chunk);
            };
        }
        curl_setopt_array($handle, $this->curlOptions + $options);

        $body = curl_exec($handle);
        if ($body === false) {
            $errno = curl_errno($handle);
            $message = sprintf(
                '%s %s: %s (curl error %d)',
                $request->method,
                $request->url,
                curl_error($handle),
                $errno,
            );
            // A failed handle may hold a broken connection: start afresh next time.
            $this->handle = null;
            if ($errno === CURLE_OPERATION_TIMEDOUT) {
                throw new ApiTimeoutException(
                    "No complete response in time: {$message}",
                    $request->method,
                    $request->url,
                );
            }
            throw new ApiConnectionException("Could not reach the API: {$message}", $request->method, $request->url);
        }
        $status = (int) curl_getinfo($handle, CURLINFO_RESPONSE_CODE);
        return new Response($status, $responseHeaders, is_string($body) ? $body : $errorBody);
    }
}
