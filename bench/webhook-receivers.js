'use strict';
/**
 * Child process of delivery.bench.js: N webhook receivers on loopback that answer 204 at once and
 * note when each event arrived. Kept out of the benchmark's process so receiving does not compete
 * with the dispatcher for its event loop.
 *
 * Messages from the parent: { type: 'report' } → { type: 'report', arrivals: [[eventId, ms], …],
 * requests }. On start it sends { type: 'ready', ports: [...] }.
 */
const http = require('node:http');

const count = Number(process.argv[2] ?? 10);
const arrivals = new Map();
let requests = 0;

function handler(req, res) {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const at = performance.timeOrigin + performance.now();
    requests += 1;
    try {
      const { id } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      // At least once: keep the first arrival, which is what a customer would see.
      if (id && !arrivals.has(id)) arrivals.set(id, at);
    } catch {
      // The bare baseline's bodies are events too; anything else is simply counted.
    }
    res.writeHead(204).end();
  });
}

Promise.all(
  Array.from(
    { length: count },
    () =>
      new Promise((resolve) => {
        const server = http.createServer({ keepAliveTimeout: 60_000 }, handler);
        server.listen(0, '127.0.0.1', () => resolve(server.address().port));
      }),
  ),
).then((ports) => process.send({ type: 'ready', ports }));

process.on('message', (message) => {
  if (message.type === 'report') {
    process.send({ type: 'report', arrivals: [...arrivals], requests });
  } else if (message.type === 'reset') {
    arrivals.clear();
    requests = 0;
    process.send({ type: 'reset' });
  }
});
process.on('disconnect', () => process.exit(0));
