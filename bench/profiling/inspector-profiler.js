'use strict';
/**
 * Preloaded (`node --require`) into both servers only when the benchmark profiles them
 * (BENCH_CPU_PROF=1). It lets the benchmark start and stop V8's sampling CPU profiler over the
 * IPC channel, so each profile covers exactly one measured case (no boot, no warm-up, no idle).
 *
 *   { type: 'profile:start' }              → replies { type: 'profile:started' }
 *   { type: 'profile:stop', file: <path> } → writes the .cpuprofile, replies { type: 'profile:stopped' }
 *
 * Nothing else about the process changes.
 */
const fs = require('node:fs');

const { post } = require('./inspector-session');

process.on('message', async (message) => {
  try {
    if (message?.type === 'profile:start') {
      await post('Profiler.enable');
      await post('Profiler.setSamplingInterval', { interval: message.intervalUs ?? 1000 });
      await post('Profiler.start');
      process.send({ type: 'profile:started' });
    } else if (message?.type === 'profile:stop') {
      const { profile } = await post('Profiler.stop');
      fs.writeFileSync(message.file, JSON.stringify(profile));
      process.send({ type: 'profile:stopped', file: message.file });
    }
  } catch (error) {
    process.send({ type: 'profile:error', message: String(error?.message ?? error) });
  }
});

// The benchmark holds the other end of the channel: never outlive it.
process.on('disconnect', () => process.exit(0));
