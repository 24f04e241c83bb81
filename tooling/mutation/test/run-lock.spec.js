// One rescoring run at a time in a checkout (src/run-lock.js): a second run is refused while the
// first one's process lives, and a lock left by a process that is gone is taken over.
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { acquireRunLock } = require('../src/run-lock');

const REPO = path.resolve(__dirname, '../../..');

/** A process that stays up until killed, standing for another run. */
function liveProcess() {
  return spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
}

/** Whether the pid in `file` is a running process. */
function heldByLiveProcess(file) {
  if (!fs.existsSync(file)) return false;
  try {
    process.kill(Number(fs.readFileSync(file, 'utf8').trim()), 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** The pid of a process that has exited. */
function deadPid() {
  const child = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], {
    encoding: 'utf8',
  });
  return Number(child.stdout.trim());
}

describe('the mutation run lock', () => {
  let dir;
  let file;
  let other;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mutation-lock-'));
    file = path.join(dir, 'reports', 'run.lock');
  });
  afterEach(() => {
    other?.kill();
    other = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('holds this process pid until released', () => {
    const release = acquireRunLock(file);
    expect(fs.readFileSync(file, 'utf8').trim()).toBe(String(process.pid));
    release();
    expect(fs.existsSync(file)).toBe(false);
  });

  it('refuses while a live process holds it, naming that process, and leaves its lock', () => {
    other = liveProcess();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `${other.pid}\n`);
    let refused;
    try {
      acquireRunLock(file);
    } catch (error) {
      refused = error;
    }
    expect(refused?.holder).toBe(other.pid);
    expect(refused.message).toContain(`pid ${other.pid}`);
    expect(fs.readFileSync(file, 'utf8').trim()).toBe(String(other.pid));
  });

  it.each([
    ['a process that is gone', () => `${deadPid()}\n`],
    ['no pid', () => 'not a pid\n'],
  ])('takes over a lock holding %s', (_, content) => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content());
    const release = acquireRunLock(file);
    expect(fs.readFileSync(file, 'utf8').trim()).toBe(String(process.pid));
    release();
  });

  it('is released when the holding process exits', () => {
    const script = `require(${JSON.stringify(require.resolve('../src/run-lock'))}).acquireRunLock(${JSON.stringify(file)});`;
    const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(fs.existsSync(file)).toBe(false);
  });
});

describe('pnpm test:mutation beside another run', () => {
  const lock = path.join(REPO, 'reports/mutation/run.lock');
  let other;
  afterEach(() => {
    if (other && fs.existsSync(lock) && fs.readFileSync(lock, 'utf8').trim() === String(other.pid))
      fs.rmSync(lock);
    other?.kill();
  });

  it('exits 2 naming the run that holds the checkout, before building anything', async () => {
    // A real run in this checkout holds the lock already; otherwise (no lock, or one left by a
    // run that was killed) a stand-in does.
    if (!heldByLiveProcess(lock)) {
      other = liveProcess();
      fs.mkdirSync(path.dirname(lock), { recursive: true });
      fs.writeFileSync(lock, `${other.pid}\n`);
    }
    const holder = fs.readFileSync(lock, 'utf8').trim();
    const run = await runCli(['effective-scopes', '--force']);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`another pnpm test:mutation (pid ${holder})`);
    expect(run.stdout).not.toContain('=== mutation:');
  }, 60_000);
});

/**
 * Runs bin/mutation.js in a process group of its own. Should it not refuse, it would build and
 * start Stryker: after 30 s the whole group (turbo, Stryker and its workers) is killed.
 */
function runCli(args) {
  const child = spawn(
    process.execPath,
    [path.join(REPO, 'tooling/mutation/bin/mutation.js'), ...args],
    {
      cwd: REPO,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => {
    const deadline = setTimeout(() => process.kill(-child.pid, 'SIGKILL'), 30_000);
    child.on('close', (status, signal) => {
      clearTimeout(deadline);
      resolve({ status: status ?? signal, stdout, stderr });
    });
  });
}
