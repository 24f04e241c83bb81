export {
  createClient,
  createClientFor,
  type ClientFor,
  type ClientOptions,
  type ListAllMethod,
  type ListItem,
  type PlatformClient,
  type QueryInput,
  type RequestArgs,
  type RouteMethod,
  type SuccessBody,
} from './client';
export {
  PlatformApiError,
  PlatformAuthenticationError,
  PlatformConflictError,
  PlatformConnectionError,
  PlatformError,
  PlatformNotFoundError,
  PlatformPermissionError,
  PlatformRateLimitError,
  PlatformServerError,
  PlatformTimeoutError,
  PlatformValidationError,
  type PlatformApiErrorInit,
  type PlatformErrorCode,
} from './errors';
export { VERSION } from './version';
export type { Problem, ProblemFieldError, Student, ErrorCode } from '@platform/contract';
