'use strict';
/**
 * The preloaded probes' connection to this process's own inspector (no port is opened):
 * `post(method, params)` as a promise, and the session for events.
 */
const inspector = require('node:inspector');

const session = new inspector.Session();
session.connect();

function post(method, params) {
  return new Promise((resolve, reject) => {
    session.post(method, params, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

module.exports = { session, post };
