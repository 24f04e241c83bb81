// Type-level tools for generated/contract-equivalence.test-d.ts, and checks of the hand-written
// types beside the generated ones. Checked by `tsc --noEmit` (pnpm typecheck); never shipped.
// The contract is a dev dependency of the client: its types are the reference, not its runtime.
import type * as C from '@platform/contract';
import type {
  AppRoute,
  ClientInferResponses,
  ContractNoBodyType,
  PartialClientInferRequest,
  SuccessfulHttpStatusCode,
} from '@ts-rest/core';
import type * as Sdk from './index';

/** True when each type is assignable to the other: the same values are accepted. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : Fail<A, B>) : Fail<A, B>;
/** A failed check names both types in the compiler's message. */
interface Fail<A, B> {
  expected: A;
  generated: B;
}
export type Check<T extends true> = T;

export type ContractRequest<R extends AppRoute> = PartialClientInferRequest<R>;
export type ContractQuery<R extends AppRoute> =
  ContractRequest<R> extends { query?: infer Q } ? Exclude<Q, undefined> : never;
type NoBodyAsUndefined<B> = B extends ContractNoBodyType ? undefined : B;
export type ContractResponse<R extends AppRoute> = NoBodyAsUndefined<
  Extract<ClientInferResponses<R>, { status: SuccessfulHttpStatusCode }>['body']
>;

// The names the SDK exports for the contract's types.
export type Checks = [
  Check<Same<C.Student, Sdk.Student>>,
  Check<Same<C.Course, Sdk.Course>>,
  Check<Same<C.Enrollment, Sdk.Enrollment>>,
  Check<Same<C.Payment, Sdk.Payment>>,
  Check<Same<C.Exam, Sdk.Exam>>,
  Check<Same<C.ExamResult, Sdk.ExamResult>>,
  Check<Same<C.WebhookEndpoint, Sdk.WebhookEndpoint>>,
  Check<Same<C.WebhookDelivery, Sdk.WebhookDelivery>>,
  Check<Same<C.WebhookEndpointOwner, Sdk.WebhookEndpointOwner | null>>,
  Check<Same<C.PersonalAccessTokenResource, Sdk.PersonalAccessTokenResource>>,
  Check<Same<C.OAuthClientResource, Sdk.OAuthClientResource>>,
  Check<Same<C.TokenInfo, Sdk.TokenInfo>>,
  Check<Same<C.PageMeta, Sdk.PageMeta>>,
  Check<Same<C.PageLinks, Sdk.PageLinks>>,
  Check<Same<C.Problem, Sdk.Problem>>,
  Check<Same<C.ProblemFieldError, Sdk.ProblemFieldError>>,
  Check<Same<C.Event, Sdk.Event>>,
  Check<Same<C.EventType, Sdk.EventType>>,
  Check<Same<C.EventOf<'payment.refunded'>, Sdk.EventOf<'payment.refunded'>>>,
  Check<Same<C.EventData<'student.deleted'>, Sdk.EventData<'student.deleted'>>>,
  Check<Same<C.ErrorCode, Sdk.ErrorCode>>,
  Check<Same<C.Scope, Sdk.Scope>>,
  Check<Same<C.StudentStatus, Sdk.StudentStatus>>,
  Check<Same<C.CourseStatus, Sdk.CourseStatus>>,
  Check<Same<C.EnrollmentStatus, Sdk.EnrollmentStatus>>,
  Check<Same<C.EnrollmentTransition, Sdk.EnrollmentTransition>>,
  Check<Same<C.PaymentStatus, Sdk.PaymentStatus>>,
  Check<Same<C.ExamResultStatus, Sdk.ExamResultStatus>>,
  Check<Same<C.WebhookDeliveryStatus, Sdk.WebhookDeliveryStatus>>,
  Check<Same<C.WebhookDisabledReason, Sdk.WebhookDisabledReason>>,
  Check<Same<C.WebhookOwnerType, Sdk.WebhookOwnerType>>,
  Check<Same<C.OAuthGrantType, Sdk.OAuthGrantType>>,
  Check<Same<C.IdKind, Sdk.IdKind>>,
  Check<Same<C.PrefixedId<'exam_result'>, Sdk.PrefixedId<'exam_result'>>>,
  Check<Same<C.SortInput<'a' | 'b'>, Sdk.SortInput<'a' | 'b'>>>,
  Check<Same<(typeof C.API_PREFIXES)[number], Sdk.ApiPrefix>>,
];
