/**
 * The Python emitter: writes `packages/client-python/src/platform_api/{resources,types}/` and
 * `_operations.py` from the SDK model. Only the generated layer: the hand-written core
 * (transport, retries, pagination, errors, webhooks, OAuth) lives beside it and is imported.
 *
 * Conventions of the output (see packages/client-python/README.md):
 * - one resource class per namespace, methods with keyword-only arguments; an argument not given
 *   is `omit` (not sent), `None` is sent as null;
 * - a `with_raw_response` twin of every method, generated from the same operation so the two
 *   cannot drift apart; the plain method is the twin's `.parse()`;
 * - models are frozen classes with typed attributes, a lenient `from_json` and a lossless
 *   `to_dict()`; enums are `Literal`s, closed on input and open (`| str`) on output;
 * - nested inputs are TypedDicts written as a required base plus a `total=False` subclass, the
 *   form Python 3.9 understands (no `NotRequired`, no `typing_extensions` at runtime).
 */
import { Context, HEADER, pyString } from './python-source';
import { maxPerPage } from './model';
import type { SdkModel } from './model';
import { emitEnums, emitModels, emitParams, emitTypesInit } from './python-models';
import { emitResource, emitResourcesInit } from './python-resources';

export const PYTHON_ROOT = 'packages/client-python/src/platform_api';

/** Repo-relative path → file content, for every generated Python file. */
export function emitPython(model: SdkModel): Map<string, string> {
  const ctx = new Context(model);
  const files = new Map<string, string>();
  files.set(`${PYTHON_ROOT}/types/enums.py`, emitEnums(ctx));
  files.set(`${PYTHON_ROOT}/types/models.py`, emitModels(ctx));
  files.set(`${PYTHON_ROOT}/types/params.py`, emitParams(ctx));
  files.set(`${PYTHON_ROOT}/types/__init__.py`, emitTypesInit(ctx));
  for (const resource of model.resources) {
    files.set(`${PYTHON_ROOT}/resources/${resource.snake}.py`, emitResource(ctx, resource));
  }
  files.set(`${PYTHON_ROOT}/resources/__init__.py`, emitResourcesInit(ctx));
  files.set(`${PYTHON_ROOT}/_operations.py`, emitOperations(ctx));
  return files;
}

// --- _operations.py ----------------------------------------------------------------------------

function emitOperations(ctx: Context): string {
  const ops = ctx.sdk.operations;
  const prefixes = new Set(ops.map((o) => `/${o.path.split('/')[1]}`));
  if (prefixes.size !== 1)
    throw new Error(`Python: operations use several prefixes: ${[...prefixes].join(', ')}`);
  const [prefix] = [...prefixes];
  let out = `${HEADER}"""Every operation of the contract, and constants of the API this SDK was generated from.

The live test suite fails when an operation listed here is never called."""

from __future__ import annotations

import typing as _t

__all__ = ["OperationInfo", "OPERATIONS", "API_PREFIX", "TOKEN_PATH", "SPEC_VERSION", "API_VERSION", "MAX_PER_PAGE"]


class OperationInfo(_t.NamedTuple):
    id: str
    """The contract's key: \`students.list\`."""
    resource: str
    """The namespace on the client: \`students\`."""
    method: str
    """The method on the namespace: \`list\`."""
    http_method: str
    path: str
    scope: _t.Optional[str]


API_PREFIX: _t.Final = ${pyString(prefix!)}
TOKEN_PATH: _t.Final = ${pyString(ctx.sdk.tokenPath)}
MAX_PER_PAGE: _t.Final = ${maxPerPage(ops)}
"""The largest page the API serves: what list calls ask for unless given \`per_page\`."""
SPEC_VERSION: _t.Final = ${pyString(ctx.sdk.version)}
API_VERSION: _t.Final[_t.Optional[str]] = ${ctx.sdk.apiVersion ? pyString(ctx.sdk.apiVersion) : 'None'}

OPERATIONS: _t.Final[_t.Tuple[OperationInfo, ...]] = (
`;
  for (const op of ops) {
    out += `    OperationInfo(${[op.id, op.resource.snake, op.method.snake, op.http, op.path].map(pyString).join(', ')}, ${op.scope === null ? 'None' : pyString(op.scope)}),\n`;
  }
  out += ')\n';
  return out;
}
