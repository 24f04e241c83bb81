'use strict';
/**
 * Baseline for anonymous-cost.bench.js: a bare node:http server that refuses every request
 * with the same 429 problem the API sends, without reading the body, and closes. It is the
 * least any Node server can spend on a refusal on this machine at this moment, so the
 * benchmark can tell the server's own cost apart from the machine's.
 */
const http = require('node:http');

const body = JSON.stringify({
  type: 'http://127.0.0.1:3000/docs/errors#rate_limited',
  title: 'Too many requests',
  status: 429,
  detail: 'Rate limit of 60 requests per 60 seconds exceeded; retry in 60 s',
  instance: '/v1/students',
  code: 'rate_limited',
  request_id: 'req_000000000000000000000000',
});

http
  .createServer((req, res) => {
    res.writeHead(429, {
      'Content-Type': 'application/problem+json; charset=utf-8',
      'Retry-After': '60',
      Connection: 'close',
    });
    res.once('finish', () => req.socket.destroy());
    res.end(body);
  })
  .listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
