'use strict';
/**
 * The control endpoint a live suite uses to take the server away and bring it back, as a crash
 * or a deploy would (`PLATFORM_CONTROL_URL`):
 *
 *   POST /restart?down=SECONDS  202 once the server has stopped (listener closed, connections
 *                               cut); it starts again SECONDS later (default 10, at most 60) on
 *                               the same port and database, so tokens and fixtures stay valid.
 *   GET  /status                {"state":"up"}, {"state":"down"}, or {"state":"failed"} when it
 *                               could not start again
 */
const http = require('node:http');

const MAX_DOWN_SECONDS = 60;

function send(response, status, body) {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

/** Serves the control endpoint for `server` (a TestServer) on loopback; resolves with its handle. */
async function startControl(server, log = () => {}) {
  let state = 'up';
  let pending = Promise.resolve();
  const restart = async (downSeconds) => {
    state = 'down';
    await server.stop();
    log(`server stopped for ${downSeconds} s`);
    pending = new Promise((resolve) => setTimeout(resolve, downSeconds * 1000))
      .then(() => server.start())
      .then(
        () => {
          state = 'up';
          log('server started again');
        },
        (error) => {
          // The suite then sees a server that stays away (`GET /status`: failed), not a crash.
          state = 'failed';
          log(`server did not start again: ${error?.message ?? error}`);
        },
      );
  };
  const control = http.createServer((request, response) => {
    const url = new URL(request.url, 'http://control');
    if (request.method === 'GET' && url.pathname === '/status')
      return send(response, 200, { state });
    if (request.method !== 'POST' || url.pathname !== '/restart') {
      return send(response, 404, { error: `no ${request.method} ${url.pathname} here` });
    }
    const down = Number(url.searchParams.get('down') ?? '10');
    if (!Number.isFinite(down) || down < 0 || down > MAX_DOWN_SECONDS) {
      return send(response, 400, { error: `down must be 0 to ${MAX_DOWN_SECONDS} seconds` });
    }
    if (state !== 'up') return send(response, 409, { error: 'the server is already down' });
    restart(down).then(
      () => send(response, 202, { state, up_in_seconds: down }),
      (error) => send(response, 500, { error: String(error?.message ?? error) }),
    );
  });
  await new Promise((resolve) => control.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${control.address().port}`,
    /** Waits for a restart in progress, then closes the endpoint. */
    close: async () => {
      await pending;
      await new Promise((resolve) => control.close(resolve));
    },
  };
}

module.exports = { startControl };
