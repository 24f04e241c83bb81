import { RESOURCE_ID_PREFIXES } from './registry';
import { z } from './zod-openapi';

/**
 * Prefixes of public ids: opaque, prefixed, time-sortable strings (a ULID after the prefix). The
 * resources' come from the registry (`registry.ts`); the rest are the API's other objects.
 */
export const ID_PREFIXES = {
  organization: 'org',
  ...RESOURCE_ID_PREFIXES,
  event: 'evt',
  webhook_endpoint: 'whe',
  webhook_message: 'msg',
  personal_access_token: 'tok',
  oauth_client: 'oac',
  user: 'usr',
  // A person, whose memberships are users (decision 34).
  account: 'acc',
  audit_event: 'aud',
  invitation: 'inv',
  export: 'exp',
  import: 'imp',
  request_log: 'rql',
  // A member's session (`/v1/user/sessions`): derived from a hash, so not time-sortable.
  session: 'ses',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const ULID = '[0-9A-HJKMNP-TV-Z]{26}';

export function idPattern(kind: IdKind): RegExp {
  return new RegExp(`^${ID_PREFIXES[kind]}_${ULID}$`);
}

/** A public id of `kind`, typed with its prefix: `PrefixedId<'student'>` is `stu_${string}`. */
export type PrefixedId<K extends IdKind> = `${(typeof ID_PREFIXES)[K]}_${string}`;

/**
 * Parses to `PrefixedId<kind>`, so ids in responses carry their prefix in the type and a
 * student's id is accepted where a student id is expected (`payments.list({ student_id })`)
 * and refused where another kind is. The input type stays `string`: the pattern is checked
 * at runtime, and callers holding an id from elsewhere need no cast.
 */
export function idSchema<K extends IdKind>(
  kind: K,
): z.ZodType<PrefixedId<K>, z.ZodStringDef, string> {
  return z
    .string()
    .regex(idPattern(kind), `must be a ${kind} id (${ID_PREFIXES[kind]}_…)`)
    .openapi({ example: `${ID_PREFIXES[kind]}_01JD6Y3ZK8R5V2N3M4P5Q6R7S8` }) as z.ZodType<
    PrefixedId<K>,
    z.ZodStringDef,
    string
  >;
}

/**
 * An external id: the key of a record in the school's own system (SIS, LMS), up to 128
 * characters; `ext:<external_id>` names the record wherever its id is accepted (decision 29).
 */
const EXTERNAL_ID_CHARACTER = '[A-Za-z0-9._~:@+-]';
export const EXTERNAL_ID = {
  maxLength: 128,
  pattern: new RegExp(`^${EXTERNAL_ID_CHARACTER}*$`),
} as const;

/** What addresses a record by its external id: `GET /v1/students/ext:SIS-0042`. */
export const EXTERNAL_ID_PREFIX = 'ext:';

/** The kinds of record that have external ids. */
export const EXTERNAL_ID_KINDS = [
  'student',
  'course',
  'enrollment',
  'payment',
  'exam',
  'exam_result',
] as const satisfies readonly IdKind[];
export type ExternalIdKind = (typeof EXTERNAL_ID_KINDS)[number];

/** A record of `kind`'s id, or `ext:<external_id>`: what a reference field or filter takes. */
export function referencePattern(kind: ExternalIdKind): RegExp {
  return new RegExp(
    `^(?:${ID_PREFIXES[kind]}_${ULID}|${EXTERNAL_ID_PREFIX}${EXTERNAL_ID_CHARACTER}{1,${EXTERNAL_ID.maxLength}})$`,
  );
}

/**
 * A body's reference to a record of `kind` that has external ids: its id (`stu_…`), or
 * `ext:<external_id>`. Parses to the id's type or the `ext:` form.
 */
export function referenceSchema<K extends ExternalIdKind>(
  kind: K,
): z.ZodType<PrefixedId<K> | `ext:${string}`, z.ZodStringDef, string> {
  return z
    .string()
    .regex(
      referencePattern(kind),
      `must be a ${kind} id (${ID_PREFIXES[kind]}_…) or ext:<its external_id>`,
    )
    .openapi({ example: `${ID_PREFIXES[kind]}_01JD6Y3ZK8R5V2N3M4P5Q6R7S8` }) as z.ZodType<
    PrefixedId<K> | `ext:${string}`,
    z.ZodStringDef,
    string
  >;
}
