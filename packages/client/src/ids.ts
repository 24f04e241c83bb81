/** Prefixes of public ids: opaque, prefixed, time-sortable strings (a ULID after the prefix). */
interface IdPrefixes {
  organization: 'org';
  student: 'stu';
  course: 'crs';
  enrollment: 'enr';
  payment: 'pay';
  exam: 'exm';
  exam_result: 'res';
  event: 'evt';
  webhook_endpoint: 'whe';
  webhook_message: 'msg';
  personal_access_token: 'tok';
  oauth_client: 'oac';
  user: 'usr';
  /** A person, the same in every organization they belong to (`GET /v1/user`'s `account_id`). */
  account: 'acc';
  audit_event: 'aud';
  invitation: 'inv';
  export: 'exp';
  import: 'imp';
  request_log: 'rql';
  /** A member's session (`/v1/user/sessions`): derived from a hash, so not time-sortable. */
  session: 'ses';
}

/** The kinds of objects with public ids. */
export type IdKind = keyof IdPrefixes;

/** A public id of `kind`, typed with its prefix: `PrefixedId<'student'>` is `stu_${string}`. */
export type PrefixedId<K extends IdKind> = `${IdPrefixes[K]}_${string}`;
