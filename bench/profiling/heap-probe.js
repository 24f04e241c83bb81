'use strict';
/**
 * Preloaded (`node --require`) into the server only when memory.bench.js is asked for heap
 * evidence (BENCH_HEAP_SNAPSHOTS=1). Over the IPC channel it answers, after a full garbage
 * collection, what the process holds, and writes heap snapshots:
 *
 *   { type: 'heap:usage' }                → replies { type: 'heap:usage', usage } (no collection)
 *   { type: 'heap:stats' }                → replies { type: 'heap:stats', stats }
 *   { type: 'heap:snapshot', file: <path> } → writes the .heapsnapshot, replies { type: 'heap:snapshot', file }
 *
 * Nothing else about the process changes.
 */
const fs = require('node:fs');
const v8 = require('node:v8');

const { session, post } = require('./inspector-session');

/** What the heap holds now, garbage included: V8's sizes and RSS (MiB). */
function usage() {
  const mb = (b) => Math.round(b / 1048576);
  const m = process.memoryUsage();
  const space = (name) => v8.getHeapSpaceStatistics().find((s) => s.space_name === name);
  return {
    rss: mb(m.rss),
    heapTotal: mb(m.heapTotal),
    heapUsed: mb(m.heapUsed),
    newSpace: mb(space('new_space')?.space_size ?? 0),
    oldSpace: mb(space('old_space')?.space_size ?? 0),
    external: mb(m.external),
  };
}

/** Heap figures after a full collection: what is live, not what V8 has not collected yet. */
async function stats() {
  await post('HeapProfiler.enable');
  const beforeGc = usage();
  await post('HeapProfiler.collectGarbage');
  const spaces = {};
  for (const s of v8.getHeapSpaceStatistics()) {
    spaces[s.space_name] = { size: s.space_size, used: s.space_used_size };
  }
  return { beforeGc, memory: process.memoryUsage(), heap: v8.getHeapStatistics(), spaces };
}

async function snapshot(file) {
  await post('HeapProfiler.enable');
  const out = fs.openSync(file, 'w');
  const onChunk = (m) => fs.writeSync(out, m.params.chunk);
  session.on('HeapProfiler.addHeapSnapshotChunk', onChunk);
  try {
    await post('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
  } finally {
    session.off('HeapProfiler.addHeapSnapshotChunk', onChunk);
    fs.closeSync(out);
  }
}

process.on('message', async (message) => {
  try {
    if (message?.type === 'heap:usage') {
      process.send({ type: 'heap:usage', usage: usage() });
    } else if (message?.type === 'heap:stats') {
      process.send({ type: 'heap:stats', stats: await stats() });
    } else if (message?.type === 'heap:snapshot') {
      await snapshot(message.file);
      process.send({ type: 'heap:snapshot', file: message.file });
    }
  } catch (error) {
    process.send({ type: 'heap:error', message: String(error?.message ?? error) });
  }
});

// The benchmark holds the other end of the channel: never outlive it.
process.on('disconnect', () => process.exit(0));
