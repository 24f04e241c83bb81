import './zod-openapi';

export * from './contract';
export * from './ids';
export * from './list';
export * from './operation';
export * from './problem';
export * from './scopes';
export * from './students';
export { API_VERSION, API_PREFIXES } from './version';
