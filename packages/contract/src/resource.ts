/** Building blocks shared by every resource's routes, so their shapes and errors match. */
import { EXTERNAL_ID, idSchema } from './ids';
import { commonErrorResponses, problemResponse } from './problem';
import { z } from './zod-openapi';

/**
 * A path id. Any string: an id that is malformed, unknown or another organization's is a 404.
 * A resource with external ids also takes `ext:<external_id>` there (up to 4 + 128 characters).
 */
export const IdPathParams = z.object({
  id: z
    .string()
    .min(1)
    .max(132)
    .describe(
      "The record's id, or `ext:<external_id>` for a student or course with an external id.",
    ),
});

/** An external id in a create or update body; null clears it. */
export const externalIdSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(EXTERNAL_ID.maxLength, `must be at most ${EXTERNAL_ID.maxLength} characters`)
  .regex(EXTERNAL_ID.pattern, 'may only contain letters, digits and . _ ~ : @ + -')
  .openapi({ example: 'SIS-0042' })
  .nullable();

/** The `external_id` of a resource that has one, as responses and events carry it. */
export function externalIdField(plural: string) {
  return z
    .string()
    .nullable()
    .describe(
      `Your system's key for this record, unique among your ${plural}, or null; \`ext:<external_id>\` stands for its id.`,
    );
}

export const notFoundResponse = {
  404: problemResponse('No such resource in your organization.'),
} as const;

/** Everything a write can answer besides its success. */
export const writeErrorResponses = {
  ...commonErrorResponses,
  ...notFoundResponse,
  409: problemResponse(
    'Conflicts with the current state: a uniqueness rule, an invalid state transition, a reference that blocks deletion, or an Idempotency-Key reused with another request.',
  ),
  413: problemResponse('The request body is larger than 1 MB.'),
  415: problemResponse('The request body is not application/json.'),
} as const;

export const readErrorResponses = { ...commonErrorResponses, ...notFoundResponse } as const;

export function deletedSchema<const O extends string>(object: O, title: string) {
  return z
    .object({ id: z.string(), object: z.literal(object), deleted: z.literal(true) })
    .openapi({ title });
}

/**
 * Why a delete is refused (409) while other records refer to the resource, and what to do
 * instead: the route's documentation (`resourceRoutes(…).delete({ refusal })`) and the server's
 * problem detail ("Course crs_… is still referred to by enrollments or exams; set its status to
 * 'archived' instead") are both made from it.
 */
export interface DeleteRefusal {
  /** Plural, as in "still referred to by enrollments or exams". */
  referencedBy: string;
  instead: string;
}

export function deleteRefusalDescription(refusal: DeleteRefusal): string {
  return `Refused with 409 while ${refusal.referencedBy} refer to it: ${refusal.instead}.`;
}

export const timestampSchema = z.string().datetime();
export const dateSchema = z.string().date().describe('YYYY-MM-DD');

/** Optional text a school can write, trimmed of nothing: empty strings are refused, null clears. */
export function text(max: number) {
  return z.string().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);
}

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/**
 * An admin hands a credential or feed to another member (`POST …/{id}/transfer`): it then
 * belongs to that member, lives as long as their membership, and is narrowed to their role.
 */
export const TransferSchema = z
  .object({
    member_id: idSchema('user').describe(
      'The member who takes it over (`usr_…`, from `GET /v1/members`).',
    ),
  })
  .strict()
  .openapi({ title: 'Transfer' });

/** What a credential's `member_id` says, as every resource that has one describes it. */
export const MEMBER_ID_DESCRIPTION =
  "The member it belongs to: who made it, or to whom an admin transferred it. Removing that member stops it, demoting them narrows it; only they or an admin may change it. Null: the organization's own (made with the admin CLI or by a token acting for no member).";
