'use strict';
// The release proof's runs: each installed consumer against a live server on loopback, with a
// freshly signed webhook delivery, every result recorded as a check.

const crypto = require('node:crypto');
const path = require('node:path');
const { blocked, exec } = require('./proof-support');

/**
 * A Standard Webhooks delivery of a student.created event, built and signed by the server's
 * own code (the body as its dispatcher builds it, the signature by its Signer), so the SDKs'
 * verifiers are checked against what the server sends. Signed afresh for each consumer: the
 * verifiers accept a timestamp within 5 minutes.
 */
function signedDelivery() {
  const { Signer, webhookPayload } = require('@platform/server/testing');
  const secret = `whsec_${crypto.randomBytes(32).toString('base64')}`;
  const studentId = 'stu_01KDXC5T2N8P4Q6R9S3V5W7X0Y';
  const now = new Date();
  const body = webhookPayload({
    eventId: 'evt_01KDXC5V9P7K2M4N6Q8R0S2T4V',
    eventType: 'student.created',
    eventCreatedAt: now,
    eventPosition: 1,
    eventData: JSON.stringify({
      id: studentId,
      object: 'student',
      student_number: 'S-2026-0042',
      first_name: 'Ana',
      last_name: 'Souza',
      preferred_name: null,
      email: 'ana.souza@school.test',
      date_of_birth: '2012-03-14',
      status: 'active',
      grade_level: 7,
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
    }),
  });
  const id = `msg_${crypto.randomBytes(12).toString('hex')}`;
  const headers = {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new Signer().sign([secret], id, now, body),
  };
  return {
    PROOF_WEBHOOK_SECRET: secret,
    PROOF_WEBHOOK_BODY_B64: Buffer.from(body, 'utf8').toString('base64'),
    PROOF_WEBHOOK_HEADERS: JSON.stringify(headers),
    PROOF_WEBHOOK_STUDENT_ID: studentId,
  };
}

/** Starts the live server and its fixtures, runs every consumer installed, then stops it. */
async function runConsumers(proof, installed) {
  const { record, want, work, logFile, installEnv, hasWebhooksEntry, env, version, log } = proof;
  const { projects, runtimesDir } = installed;
  // From here on: loopback only, for this process and every Node child (tooling/hermetic).
  require('@platform/hermetic').enforceForRun();
  const guardedEnv = { ...installEnv, NODE_OPTIONS: process.env.NODE_OPTIONS };
  const {
    startServer,
    createFixtures,
    fixtureEnv,
    writeFixturesFile,
  } = require('@platform/sdk-live');
  let server;
  let fixturesFile;
  try {
    server = await startServer({ env });
    const fixtures = await createFixtures(server, { env, refreshTokens: 1 });
    fixturesFile = writeFixturesFile(fixtures);
    log(`live server ${server.url} (${fixtures.database}) with an organization and its token`);
    const runEnv = {
      ...guardedEnv,
      ...fixtureEnv(fixtures, fixturesFile.file),
      PROOF_VERSION: version,
      ...(hasWebhooksEntry && { PROOF_WEBHOOKS_ENTRY: '1' }),
    };
    /** Runs one consumer script with a freshly signed delivery; its last line is the note. */
    const run = ({ consumer, label, check, command, args, cwd, extra = {} }) =>
      exec(command, args, {
        cwd,
        env: { ...runEnv, ...signedDelivery(), PROOF_LABEL: label, ...extra },
        logFile,
      }).then((result) => record(consumer, check, result, result.output.trim().split('\n').pop()));
    const entries = hasWebhooksEntry ? '`.` and `./webhooks`' : '`.`';
    const ctx = { run, record, want, work, server, entries, guardedEnv, logFile };

    await runNodeProjects(ctx, projects);

    await runRuntimes(ctx, projects, runtimesDir);

    await runPythonAndPhp(ctx, installed);
  } catch (error) {
    record('server', 'live server and fixtures', blocked(String(error.stack ?? error)));
  } finally {
    fixturesFile?.remove();
    await server?.close();
  }
}

/** Node ESM and CommonJS, and tsc, in each package manager's project. */
async function runNodeProjects({ run, record, guardedEnv, logFile, entries }, projects) {
  for (const { manager, dir, ok, tscChecks } of projects) {
    if (!ok) {
      for (const check of ['node ESM', 'node CommonJS', ...tscChecks.map((t) => t.check)])
        record(manager, check, blocked('not run: the install above failed'));
      continue;
    }
    for (const [kind, file] of [
      ['ESM', 'consumer.mjs'],
      ['CommonJS', 'consumer.cjs'],
    ]) {
      await run({
        consumer: manager,
        label: `${manager}-node-${kind.toLowerCase()}`,
        check: `node ${kind} (${entries})`,
        command: process.execPath,
        args: [file],
        cwd: dir,
      });
    }
    for (const { check, config } of tscChecks) {
      const tsc = await exec(
        process.execPath,
        [path.join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config],
        { cwd: dir, env: guardedEnv, logFile },
      );
      record(manager, check, tsc, `type-checked in ${(tsc.ms / 1000).toFixed(1)} s`);
    }
  }
}

/** Bun and Deno, in the npm project. */
async function runRuntimes({ run, record, want, server, entries }, projects, runtimesDir) {
  const npmProject = projects.find((p) => p.manager === 'npm');
  // Bun and Deno are no Node: the hermetic guard (NODE_OPTIONS) does not reach them; the
  // script talks to PLATFORM_BASE_URL only, and Deno is held to loopback by its permissions.
  const runtimeEnv = {
    NODE_OPTIONS: '',
    DO_NOT_TRACK: '1',
    DENO_NO_UPDATE_CHECK: '1',
    DENO_NO_PROMPT: '1',
  };
  for (const runtime of ['bun', 'deno']) {
    if (!want(runtime)) continue;
    for (const [kind, file] of [
      ['ESM', 'consumer.mjs'],
      ['CommonJS', 'consumer.cjs'],
    ]) {
      const check = `${runtime} ${kind} in the npm project (${entries})`;
      if (!runtimesDir || !npmProject?.ok) {
        record(runtime, check, blocked('not run: its install or the npm project failed'));
        continue;
      }
      const port = new URL(server.url).port;
      const args =
        // Neither may fetch a package itself: Bun's auto-install off, Deno from the cache only.
        runtime === 'bun'
          ? ['--no-install', file]
          : [
              'run',
              '--cached-only',
              `--allow-net=127.0.0.1:${port}`,
              '--allow-env',
              `--allow-read=${npmProject.dir}`,
              file,
            ];
      await run({
        consumer: runtime,
        label: `${runtime}-${kind.toLowerCase()}`,
        check,
        command: path.join(runtimesDir, 'node_modules', '.bin', runtime),
        args,
        cwd: npmProject.dir,
        extra: runtimeEnv,
      });
    }
  }
}

/** The Python scripts in their venvs and the PHP script in each composer project. */
async function runPythonAndPhp({ run, record, want, work }, installed) {
  const { venvPython, asyncVenvPython, phpDirs } = installed;
  if (want('python')) {
    const check = 'script in the venv (import platform_api)';
    if (venvPython) {
      await run({
        consumer: 'python',
        label: 'python',
        check,
        command: venvPython,
        args: ['consumer.py'],
        cwd: path.join(work, 'python'),
      });
    } else record('python', check, blocked('not run: the install above failed'));
    const asyncCheck = 'script in the venv, AsyncPlatformClient too';
    if (asyncVenvPython) {
      await run({
        consumer: 'python (async)',
        label: 'python-async',
        check: asyncCheck,
        command: asyncVenvPython,
        args: ['consumer.py'],
        cwd: path.join(work, 'python'),
        extra: { PROOF_ASYNC: '1' },
      });
    } else record('python (async)', asyncCheck, blocked('not run: the install above failed'));
  }
  for (const { consumer, dir } of phpDirs) {
    const check = 'script with vendor/autoload.php';
    if (dir) {
      await run({
        consumer,
        label: consumer.replace(/[^a-z]+/g, '-').replace(/-$/, ''),
        check,
        command: 'php',
        args: ['consumer.php'],
        cwd: dir,
      });
    } else record(consumer, check, blocked('not run: the install above failed'));
  }
}

module.exports = { runConsumers };
