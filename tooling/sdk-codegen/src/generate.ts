/**
 * Runs every emitter over the SDK model read from the contract's OpenAPI document and writes
 * (or, with `check`, compares) the files. Generated files are committed: users read them and
 * install from them, and CI fails when regenerating would change one.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fromOpenApi } from './from-openapi';
import type { SdkModel } from './model';
import { emitPhp } from './php';
import { emitPython } from './python';
import { CODE_SAMPLES_FILE, emitReference } from './reference';
import { emitTypeScript, TS_ROOT } from './typescript';

export interface Emitter {
  name: string;
  /**
   * Folders (repo-relative) that hold only this emitter's output: a file there that it no longer
   * writes is stale, and is deleted (or reported by `check`).
   */
  ownedDirs: string[];
  emit(model: SdkModel): Map<string, string>;
}

export const EMITTERS: Emitter[] = [
  { name: 'reference', ownedDirs: [], emit: emitReference },
  { name: 'typescript', ownedDirs: [TS_ROOT], emit: emitTypeScript },
  {
    name: 'php',
    ownedDirs: ['packages/client-php/src/Service', 'packages/client-php/src/Model'],
    emit: emitPhp,
  },
  {
    name: 'python',
    ownedDirs: [
      'packages/client-python/src/platform_api/resources',
      'packages/client-python/src/platform_api/types',
    ],
    emit: emitPython,
  },
];

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

export function loadModel(): SdkModel {
  const document = JSON.parse(
    readFileSync(require.resolve('@platform/contract/openapi.json'), 'utf8'),
  ) as Record<string, unknown>;
  return fromOpenApi(document);
}

/** Where the contract's OpenAPI document is committed, repo-relative. */
export const OPENAPI_FILE = 'packages/contract/openapi.json';

/** The contract's `generateOpenApiDocument`, from its built `dist/openapi.js`. */
interface ContractOpenApi {
  generateOpenApiDocument(
    version: string,
    options?: { codeSamples?: Record<string, unknown> },
  ): Record<string, unknown>;
}

/**
 * Every generated file, openapi.json included, from the built contract rather than the committed
 * document. The SDK model ignores `x-codeSamples`, so it is read from the document without them;
 * the samples the reference emitter writes then go into openapi.json, which is written once.
 */
export function renderFromContract(emitters: Emitter[] = EMITTERS): Map<string, string> {
  const contractDir = path.dirname(require.resolve('@platform/contract/openapi.json'));
  const { version } = JSON.parse(readFileSync(path.join(contractDir, 'package.json'), 'utf8')) as {
    version: string;
  };
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the contract's build, at run time
  const contract = require('@platform/contract/openapi') as ContractOpenApi;
  const document = JSON.parse(JSON.stringify(contract.generateOpenApiDocument(version))) as Record<
    string,
    unknown
  >;
  const files = render(fromOpenApi(document), emitters);
  const samples = files.get(CODE_SAMPLES_FILE);
  if (samples === undefined) throw new Error(`no emitter writes ${CODE_SAMPLES_FILE}`);
  const codeSamples = JSON.parse(samples) as Record<string, unknown>;
  const full = contract.generateOpenApiDocument(version, { codeSamples });
  files.set(OPENAPI_FILE, `${JSON.stringify(full, null, 2)}\n`);
  return files;
}

/** Every file the emitters write, repo-relative. */
export function render(model: SdkModel, emitters: Emitter[] = EMITTERS): Map<string, string> {
  const files = new Map<string, string>();
  for (const emitter of emitters) {
    for (const [file, content] of emitter.emit(model)) {
      if (files.has(file)) throw new Error(`${emitter.name} writes ${file}, already written`);
      files.set(file, content.endsWith('\n') ? content : `${content}\n`);
    }
  }
  return files;
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.parentPath.split(path.sep).includes('__pycache__'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

export interface Drift {
  changed: string[];
  stale: string[];
}

/** What differs between the committed files and a fresh generation. */
export function drift(files: Map<string, string>, root = REPO_ROOT, emitters = EMITTERS): Drift {
  const changed = [...files].filter(([file, content]) => {
    const target = path.join(root, file);
    return !existsSync(target) || readFileSync(target, 'utf8') !== content;
  });
  const stale = emitters
    .flatMap((emitter) => emitter.ownedDirs)
    .flatMap((dir) => filesUnder(path.join(root, dir)))
    .map((file) => path.relative(root, file))
    .filter((file) => !files.has(file));
  return { changed: changed.map(([file]) => file), stale };
}

export function write(files: Map<string, string>, root = REPO_ROOT, emitters = EMITTERS): Drift {
  const result = drift(files, root, emitters);
  for (const file of result.changed) {
    const target = path.join(root, file);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, files.get(file)!);
  }
  for (const file of result.stale) rmSync(path.join(root, file));
  return result;
}
