export * from './model';
export { fromOpenApi, camelCase, snakeCase, pascalCase } from './from-openapi';
