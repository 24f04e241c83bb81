export * from './model';
export { fromOpenApi, camelCase, snakeCase, pascalCase } from './from-openapi';
export { EMITTERS, drift, loadModel, render, write, type Emitter } from './generate';
export { emitReference, samplesFor } from './reference';
export { emitPhp } from './php';
export { emitPython } from './python';
