// Where the release's version is written. Changesets bumps the seven package.json files of the
// fixed group; it knows nothing of the SDKs' own constants, the OpenAPI document (and the SDK
// files generated from it) or pyproject, so this module reads and writes those. Own code because
// no maintained tool covers a TypeScript + PHP + Python monorepo's version strings; each entry
// is a small, anchored pattern so an unexpected file shape is an error, never a silent skip.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

/** The packages of the fixed version group (.changeset/config.json), by directory. */
const PACKAGES = {
  '@platform/server': 'apps/server',
  '@platform/contract': 'packages/contract',
  '@platform/client': 'packages/client',
  '@platform/client-php': 'packages/client-php',
  '@platform/client-python': 'packages/client-python',
  '@platform/sync': 'packages/platform-sync',
  '@platform/listen': 'packages/platform-listen',
};

/** A version string as semver allows it (with an optional pre-release, no build metadata). */
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

/** One line anchored by `pattern` whose first group is the version. */
function constant(file, pattern, what) {
  return {
    file,
    what,
    read(text) {
      const match = pattern.exec(text);
      if (!match) throw new Error(`${file}: no ${what} (expected a line matching ${pattern})`);
      return match[1];
    },
    write(text, version) {
      this.read(text);
      return text.replace(pattern, (line, old) => line.replace(old, version));
    },
  };
}

function packageJson(name, dir) {
  const file = `${dir}/package.json`;
  return {
    file,
    what: `${name}'s version`,
    read(text) {
      const { version } = JSON.parse(text);
      if (typeof version !== 'string') throw new Error(`${file}: no "version"`);
      return version;
    },
    // Changesets writes these; the release only reads them.
    write: null,
  };
}

/** Every place that states the release's version, in the order the check reports them. */
const SOURCES = [
  ...Object.entries(PACKAGES).map(([name, dir]) => packageJson(name, dir)),
  {
    file: 'packages/contract/openapi.json',
    what: "the OpenAPI document's info.version",
    read(text) {
      const version = JSON.parse(text).info?.version;
      if (typeof version !== 'string') throw new Error(`${this.file}: no info.version`);
      return version;
    },
    write(text, version) {
      // The document is generated (scripts/write-openapi.js) with two-space JSON and a final
      // newline; rewriting it the same way keeps the contract's drift test green.
      const doc = JSON.parse(text);
      doc.info.version = version;
      return `${JSON.stringify(doc, null, 2)}\n`;
    },
  },
  constant(
    'packages/client/src/version.ts',
    /^export const VERSION = '([^']+)';$/m,
    "the TypeScript SDK's VERSION (User-Agent)",
  ),
  constant(
    'packages/client-php/src/PlatformClient.php',
    /^ {4}public const VERSION = '([^']+)';$/m,
    "the PHP SDK's PlatformClient::VERSION (User-Agent)",
  ),
  // Generated from openapi.json by @platform/sdk-codegen; written here too so the drift check
  // stays green without a regeneration (which needs the contract built).
  constant(
    'packages/client-php/src/Service/Operations.php',
    /^ {4}public const VERSION = '([^']+)';$/m,
    "the PHP SDK's Operations::VERSION (generated)",
  ),
  constant(
    'packages/client-python/src/platform_api/_version.py',
    /^__version__ = "([^"]+)"$/m,
    "the Python SDK's __version__ (User-Agent, and the wheel's version through pyproject)",
  ),
  constant(
    'packages/client-python/src/platform_api/_operations.py',
    /^SPEC_VERSION: _t\.Final = "([^"]+)"$/m,
    "the Python SDK's SPEC_VERSION (generated)",
  ),
  {
    file: 'packages/client-python/pyproject.toml',
    what: "pyproject.toml's version (dynamic, read by hatchling from _version.py)",
    // pyproject states no version of its own: `dynamic = ["version"]` with hatch reading
    // _version.py, so the wheel cannot disagree with the SDK. Check that this still holds.
    read(text) {
      const start = text.indexOf('[project]\n');
      const end = text.indexOf('\n[', start + 1);
      const project = start < 0 ? '' : text.slice(start, end < 0 ? undefined : end);
      if (/^version\s*=/m.test(project)) {
        throw new Error(
          `${this.file}: a static [project] version; keep it dynamic (from _version.py)`,
        );
      }
      if (!/^dynamic = \[[^\]]*"version"/m.test(project)) {
        throw new Error(`${this.file}: [project] must have dynamic = ["version"]`);
      }
      if (!/^path = "src\/platform_api\/_version\.py"$/m.test(text)) {
        throw new Error(
          `${this.file}: [tool.hatch.version] must read src/platform_api/_version.py`,
        );
      }
      return null;
    },
    write: null,
  },
];

/**
 * Reads every source under `root`: `{ versions: [{ file, what, version }], errors: [message] }`.
 * A source that states no version of its own (pyproject) is checked but not listed.
 */
function readVersions(root) {
  const versions = [];
  const errors = [];
  for (const source of SOURCES) {
    try {
      const version = source.read(fs.readFileSync(path.join(root, source.file), 'utf8'));
      if (version !== null) versions.push({ file: source.file, what: source.what, version });
    } catch (error) {
      errors.push(error.code === 'ENOENT' ? `${source.file}: missing` : error.message);
    }
  }
  return { versions, errors };
}

/**
 * The one version of the release, or the reasons there is none: every source must state the
 * same, well-formed version. The messages name each file and what it says.
 */
function checkVersions(root) {
  const { versions, errors } = readVersions(root);
  const reference =
    versions.find((v) => v.file === 'packages/contract/package.json') ?? versions[0];
  if (reference && !SEMVER.test(reference.version)) {
    errors.push(`${reference.file}: "${reference.version}" is not a semantic version`);
  }
  for (const entry of versions) {
    if (reference && entry.version !== reference.version) {
      errors.push(
        `${entry.file}: ${entry.what} is ${entry.version}, but ${reference.file} says ${reference.version}`,
      );
    }
  }
  return { version: reference?.version ?? null, versions, errors };
}

/** Writes `version` into every source Changesets does not write; returns the files changed. */
function syncVersions(root, version) {
  if (!SEMVER.test(version)) throw new Error(`"${version}" is not a semantic version`);
  const changed = [];
  for (const source of SOURCES) {
    if (!source.write) continue;
    const file = path.join(root, source.file);
    const before = fs.readFileSync(file, 'utf8');
    const after = source.write(before, version);
    if (after !== before) {
      fs.writeFileSync(file, after);
      changed.push(source.file);
    }
  }
  return changed;
}

/** The version Changesets gave the fixed group (the contract's package.json is its reference). */
function groupVersion(root) {
  return JSON.parse(
    fs.readFileSync(path.join(root, PACKAGES['@platform/contract'], 'package.json'), 'utf8'),
  ).version;
}

module.exports = {
  PACKAGES,
  SOURCES,
  SEMVER,
  readVersions,
  checkVersions,
  syncVersions,
  groupVersion,
};
