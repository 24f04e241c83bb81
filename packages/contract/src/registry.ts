/**
 * The resource registry: one entry per resource (a collection of an organization's records, such
 * as `/v1/students`). Everything that lists resources is derived from it: the id prefixes
 * (`ID_PREFIXES`), the scopes (`SCOPE_RESOURCES`), the event types and who may read them
 * (`EVENT_READ_SCOPES`), the exported collections and their scopes, and the delete refusals'
 * wording (what still refers to a record). The schemas, bodies and routes stay in the resource's
 * own module (`<name>.ts`); the server's registry (`apps/server/src/resources.ts`) adds the
 * entity, the tables and the Nest module. See docs/adding-a-resource.md.
 *
 * Plain data, importing nothing: `ids.ts` and `scopes.ts`, which every resource module uses, are
 * built from it.
 */
export interface ResourceEntry {
  /** The object's name in responses and events, and its id kind: `student`. */
  readonly singular: string;
  /** The id prefix: three lower-case letters, unique (`stu` in `stu_01J…`). */
  readonly prefix: string;
  /** The scope resource that reads and writes it (`students:read`, `students:write`). */
  readonly scope: string;
  /** Its event types, without the `<singular>.` prefix: `created`, `updated`, …. */
  readonly events: readonly string[];
  /** Whether `POST /v1/exports` and `GET /v1/checksums` read it. */
  readonly exported: boolean;
  /** The resources its records refer to (by `<singular>_id`); their delete refusals name it. */
  readonly references: readonly string[];
}

export const RESOURCES = {
  students: {
    singular: 'student',
    prefix: 'stu',
    scope: 'students',
    events: ['created', 'updated', 'deleted'],
    exported: true,
    references: [],
  },
  courses: {
    singular: 'course',
    prefix: 'crs',
    scope: 'courses',
    events: ['created', 'updated', 'deleted'],
    exported: true,
    references: [],
  },
  enrollments: {
    singular: 'enrollment',
    prefix: 'enr',
    scope: 'enrollments',
    events: ['created', 'updated', 'active', 'completed', 'dropped', 'cancelled'],
    exported: true,
    references: ['students', 'courses'],
  },
  payments: {
    singular: 'payment',
    prefix: 'pay',
    scope: 'payments',
    events: ['created', 'succeeded', 'failed', 'refunded'],
    exported: true,
    references: ['students', 'enrollments'],
  },
  exams: {
    singular: 'exam',
    prefix: 'exm',
    scope: 'exam_results',
    events: ['created', 'updated', 'deleted'],
    exported: true,
    references: ['courses'],
  },
  exam_results: {
    singular: 'exam_result',
    prefix: 'res',
    scope: 'exam_results',
    events: ['created', 'updated', 'published'],
    exported: true,
    references: ['exams', 'students'],
  },
} as const satisfies Record<string, ResourceEntry>;

type Registry = typeof RESOURCES;
export type ResourceName = keyof Registry;

/** Every resource's name, in the registry's order. */
export const RESOURCE_NAMES = Object.keys(RESOURCES) as [ResourceName, ...ResourceName[]];

/** `{ student: 'stu', … }`: each resource's id kind and prefix. */
export type ResourceIdPrefixes = {
  readonly [N in ResourceName as Registry[N]['singular']]: Registry[N]['prefix'];
};

export const RESOURCE_ID_PREFIXES = Object.fromEntries(
  RESOURCE_NAMES.map((name) => [RESOURCES[name].singular, RESOURCES[name].prefix]),
) as ResourceIdPrefixes;

/** The scope resources the resources use, each once, in the registry's order. */
export type ResourceScope = Registry[ResourceName]['scope'];
export const RESOURCE_SCOPES = [
  ...new Set(RESOURCE_NAMES.map((name) => RESOURCES[name].scope)),
] as ResourceScope[];

/** `student.created`, … for every resource. */
export type ResourceEventType = {
  [N in ResourceName]: `${Registry[N]['singular']}.${Registry[N]['events'][number]}`;
}[ResourceName];

/** Each resource event type and the scope that reads its data, in the registry's order. */
export const RESOURCE_EVENT_READ_SCOPES = Object.fromEntries(
  RESOURCE_NAMES.flatMap((name) => {
    const { singular, scope, events } = RESOURCES[name];
    return events.map((event) => [`${singular}.${event}`, `${scope}:read`]);
  }),
) as { readonly [T in ResourceEventType]: `${ResourceScope}:read` };

/** The exported collections. */
export type ExportedResource = {
  [N in ResourceName]: Registry[N]['exported'] extends true ? N : never;
}[ResourceName];
export const EXPORTED_RESOURCES = RESOURCE_NAMES.filter(
  (name) => RESOURCES[name].exported,
) as ExportedResource[];

/** `exam_results` → `exam results`. */
export function resourceLabel(name: ResourceName): string {
  return name.replace(/_/g, ' ');
}

/**
 * The resources whose records refer to `name`, as a refusal says it: `enrollments, payments or
 * exam results`; `other records` while nothing does. Derived from each entry's `references`, so
 * a new reference is named at once.
 */
export function referencedBy(name: ResourceName): string {
  const labels = RESOURCE_NAMES.filter((other) =>
    (RESOURCES[other].references as readonly string[]).includes(name),
  ).map(resourceLabel);
  const last = labels.pop();
  if (last === undefined) return 'other records';
  return labels.length === 0 ? last : `${labels.join(', ')} or ${last}`;
}

/** A delete refusal's wording (`DeleteRefusal` in resource.ts): what refers to `name`, and what to do instead. */
export function deleteRefusal(
  name: ResourceName,
  instead: string,
): { readonly referencedBy: string; readonly instead: string } {
  return { referencedBy: referencedBy(name), instead };
}

/** `exam_results` → `examResults`. */
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;

/** The resource's router in `contract`: `exam_results` → `contract.examResults`. */
export type ResourceContractKey<N extends ResourceName> = CamelCase<N>;
export function resourceContractKey<N extends ResourceName>(name: N): ResourceContractKey<N> {
  return name.replace(/_([a-z])/g, (_, letter: string) =>
    letter.toUpperCase(),
  ) as ResourceContractKey<N>;
}
