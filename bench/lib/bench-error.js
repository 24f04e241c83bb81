'use strict';

/** A failure the benchmark explains itself (no stack trace). */
class BenchError extends Error {}

module.exports = { BenchError };
