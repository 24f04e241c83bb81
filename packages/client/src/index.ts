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
  type RequestOptions,
  type RouteMethod,
  type SuccessBody,
} from './client';
export { PlatformPromise, type RawResponse } from './api-promise';
export {
  type ErrorHookEvent,
  type RequestHookEvent,
  type RequestHooks,
  type ResponseHookEvent,
} from './http-client';
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
export { PlatformOAuthError, type OAuthOptions, type OAuthTokens } from './oauth';
export {
  buildAuthorizationUrl,
  exchangeAuthorizationCode,
  type AuthorizationRequest,
  type AuthorizationUrlOptions,
  type CodeExchangeOptions,
} from './oauth-pkce';
export { VERSION } from './version';
export {
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  signWebhook,
  verifyWebhook,
  WebhookVerificationError,
  type SignWebhookOptions,
  type VerifyWebhookOptions,
  type WebhookBody,
  type WebhookHeaders,
  type WebhookSignatureHeaders,
  type WebhookVerificationErrorReason,
} from './webhooks';
export type {
  ErrorCode,
  Event,
  EventOf,
  EventType,
  Problem,
  ProblemFieldError,
  Student,
} from '@platform/contract';
