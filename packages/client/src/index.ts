export { createClient, type ApiPrefix, type Client, type ClientOptions } from './client';
export { collectionChecksum, type ExportHelpers, type WaitOptions } from './exports';
export type { ImportHelpers } from './imports';
export type {
  CallArgs,
  FetchOptions,
  GenericRequest,
  GenericRequestArgs,
  RequestOptions,
  UploadBody,
} from './route-types';
export type { IntegerFilter, ListFilter, RangeFilters, SortInput, SortKey } from './list-types';
export type { IdKind, PrefixedId } from './ids';
export {
  PagePromise,
  PlatformPromise,
  type AutoPagingToArrayOptions,
  type RawResponse,
} from './api-promise';
export {
  type DeprecationEvent,
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
  PlatformCursorExpiredError,
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
export { type FeedCursor, FeedFollower, type FeedPage, type FollowOptions } from './feed';
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
// Every resource, input, query, event and enum type of the API, generated from the contract,
// so an app needs no other import to type what it stores.
export type * from './generated/types';
export type * from './generated/routes';
export type {
  OAuthClient as OAuthClientResource,
  PersonalAccessToken as PersonalAccessTokenResource,
  ProblemCode as ErrorCode,
  WebhookEndpointDisabledReason as WebhookDisabledReason,
  WebhookEndpointOwnerType as WebhookOwnerType,
  OAuthClientGrantType as OAuthGrantType,
} from './generated/types';
export type { EnrollmentTransition, EventData, EventOf } from './event-types';
export { WEBHOOK_EVENT_TYPES } from './event-types';
export { EXPORT_COLLECTIONS } from './generated/constants';
