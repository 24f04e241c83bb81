'use strict';
// One rescoring run at a time in a checkout. Two runs share `.stryker-tmp/<module>` and
// `reports/mutation/`: one removes the other's sandbox under it, and a module fails (or a wrong
// summary is read) for no fault of its own. A run that is stopped half-way leaves its parent
// (`bin/mutation.js`) going on to the next module unless that process is stopped too, so
// starting another run beside it is easy to do by accident.
//
// The lock is a file holding the owner's pid. A process's liveness is the test, not the file's
// age: the owner waits in `spawnSync` for as long as a module takes (up to a quarter of an
// hour), so it could not refresh a heartbeat as time-based locks (proper-lockfile) want.
const fs = require('node:fs');
const path = require('node:path');

/** Whether a process with this pid exists (EPERM: it exists, as another user's). */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** The pid in the lock file, or undefined when there is none or it is not a pid. */
function holder(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  }
  const pid = Number(text.trim());
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * Takes the lock at `file` for this process, and returns the function that releases it (also
 * called at exit). Throws an error with `holder` set when a live process holds it. A lock left
 * by a process that is gone, or a file that names no pid, is taken over.
 */
function acquireRunLock(file) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  for (;;) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
    const pid = holder(file);
    if (pid !== undefined && pid !== process.pid && alive(pid)) {
      throw Object.assign(
        new Error(
          `another pnpm test:mutation (pid ${pid}) is rescoring in this checkout; ` +
            `wait for it or stop it (kill ${pid}), then run again`,
        ),
        { holder: pid },
      );
    }
    // Gone, or never written: remove it and try again (another starter may win the race).
    fs.rmSync(file, { force: true });
  }
  const release = () => {
    if (holder(file) === process.pid) fs.rmSync(file, { force: true });
    process.removeListener('exit', release);
  };
  process.on('exit', release);
  return release;
}

module.exports = { acquireRunLock };
