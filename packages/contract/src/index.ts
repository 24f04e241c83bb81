import './zod-openapi';

export * from './contract';
export * from './courses';
export * from './date-time';
export * from './enrollments';
export * from './events';
export * from './exams';
export * from './ids';
export * from './list';
export * from './operation';
export * from './payments';
export * from './problem';
export * from './resource';
export * from './scopes';
export * from './students';
export * from './tokens';
export * from './webhooks';
export { API_VERSION, API_PREFIXES } from './version';
