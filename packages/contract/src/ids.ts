import { z } from './zod-openapi';

/** Prefixes of public ids: opaque, prefixed, time-sortable strings (a ULID after the prefix). */
export const ID_PREFIXES = {
  organization: 'org',
  student: 'stu',
  course: 'crs',
  enrollment: 'enr',
  payment: 'pay',
  exam: 'exm',
  exam_result: 'res',
  event: 'evt',
  webhook_endpoint: 'whe',
  webhook_message: 'msg',
  personal_access_token: 'tok',
  oauth_client: 'oac',
  user: 'usr',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const ULID = '[0-9A-HJKMNP-TV-Z]{26}';

export function idPattern(kind: IdKind): RegExp {
  return new RegExp(`^${ID_PREFIXES[kind]}_${ULID}$`);
}

export function idSchema(kind: IdKind) {
  return z
    .string()
    .regex(idPattern(kind), `must be a ${kind} id (${ID_PREFIXES[kind]}_…)`)
    .openapi({ example: `${ID_PREFIXES[kind]}_01JD6Y3ZK8R5V2N3M4P5Q6R7S8` });
}
