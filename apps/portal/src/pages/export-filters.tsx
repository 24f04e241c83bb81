import type {
  CourseStatus,
  EnrollmentStatus,
  ExamResultStatus,
  ExportCollection,
  PaymentStatus,
  StudentStatus,
} from '@platform/client';

/** A filter with a typed value: an id, a code, a number. */
interface FieldFilter {
  name: string;
  label: string;
  kind: 'text' | 'integer';
}

/**
 * Each collection's list filters (the contract's list queries), as records over the SDK's status
 * types so a status added to the API fails the type-check until it is offered here. Every
 * collection also takes the `created_at` range and `updated_since` (ExportFilters adds them).
 */
const STUDENT: Record<StudentStatus, true> = {
  active: true,
  inactive: true,
  graduated: true,
  withdrawn: true,
};
const COURSE: Record<CourseStatus, true> = { draft: true, active: true, archived: true };
const ENROLLMENT: Record<EnrollmentStatus, true> = {
  pending: true,
  active: true,
  completed: true,
  dropped: true,
  cancelled: true,
};
const PAYMENT: Record<PaymentStatus, true> = {
  pending: true,
  succeeded: true,
  failed: true,
  refunded: true,
};
const RESULT: Record<ExamResultStatus, true> = { draft: true, published: true };

const id = (name: string, label: string): FieldFilter => ({ name, label, kind: 'text' });

export const COLLECTION_FILTERS: Record<
  ExportCollection,
  { statuses: readonly string[]; fields: readonly FieldFilter[] }
> = {
  students: {
    statuses: Object.keys(STUDENT),
    fields: [{ name: 'grade_level', label: 'Grade level', kind: 'integer' }],
  },
  courses: {
    statuses: Object.keys(COURSE),
    fields: [{ name: 'code', label: 'Course code', kind: 'text' }],
  },
  enrollments: {
    statuses: Object.keys(ENROLLMENT),
    fields: [id('student_id', 'Student id'), id('course_id', 'Course id')],
  },
  payments: {
    statuses: Object.keys(PAYMENT),
    fields: [
      id('student_id', 'Student id'),
      id('enrollment_id', 'Enrollment id'),
      { name: 'currency', label: 'Currency (ISO 4217, e.g. EUR)', kind: 'text' },
    ],
  },
  exams: { statuses: [], fields: [id('course_id', 'Course id')] },
  exam_results: {
    statuses: Object.keys(RESULT),
    fields: [id('exam_id', 'Exam id'), id('student_id', 'Student id')],
  },
};

/** What the form holds: the chosen statuses, the typed fields and the days (`YYYY-MM-DD`). */
export interface FilterValues {
  statuses: string[];
  fields: Record<string, string>;
  createdFrom: string;
  createdTo: string;
  changedSince: string;
}

export const NO_FILTERS: FilterValues = {
  statuses: [],
  fields: {},
  createdFrom: '',
  createdTo: '',
  changedSince: '',
};

/** The local day's start (plus `offset` days) as ISO 8601. */
function dayStart(day: string, offset = 0): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return new Date(y, m - 1, d + offset).toISOString();
}

/** The export's `filters` body: the API's names, values as a list query gives them. */
export function filterBody(
  collection: ExportCollection,
  values: FilterValues,
): Record<string, string> {
  const body: Record<string, string> = {};
  const allowed = COLLECTION_FILTERS[collection];
  const statuses = values.statuses.filter((s) => allowed.statuses.includes(s));
  if (statuses.length) body.status = statuses.join(',');
  for (const field of allowed.fields) {
    const value = values.fields[field.name]?.trim();
    if (value) body[field.name] = value;
  }
  if (values.createdFrom) body['created_at[gte]'] = dayStart(values.createdFrom);
  if (values.createdTo) body['created_at[lt]'] = dayStart(values.createdTo, 1);
  if (values.changedSince) body.updated_since = dayStart(values.changedSince);
  return body;
}

/** An export's filters in words for its row: "status active, graduated; created_at[gte] …". */
export function describeFilters(filters: Record<string, string>): string {
  const entries = Object.entries(filters);
  if (entries.length === 0) return 'Everything';
  return entries
    .map(([name, value]) => {
      const date = /(_at\[|_since)/.test(name) ? new Date(value) : null;
      const shown =
        date && !Number.isNaN(date.getTime())
          ? date.toLocaleDateString(undefined, { dateStyle: 'medium' })
          : value.replaceAll(',', ', ');
      const label = name
        .replace(/_at\[gte\]$/, ' from')
        .replace(/_at\[lt\]$/, ' before')
        .replace(/^updated_since$/, 'changed since')
        .replaceAll('_', ' ');
      return `${label}: ${shown}`;
    })
    .join('; ');
}

/** The collection's filters: statuses to keep, its own fields, and the dates every one has. */
export function ExportFilters({
  collection,
  values,
  onChange,
}: {
  collection: ExportCollection;
  values: FilterValues;
  onChange: (next: FilterValues) => void;
}) {
  const { statuses, fields } = COLLECTION_FILTERS[collection];
  const toggle = (status: string, on: boolean) =>
    onChange({
      ...values,
      statuses: on ? [...values.statuses, status] : values.statuses.filter((s) => s !== status),
    });
  const day = (key: 'createdFrom' | 'createdTo' | 'changedSince', label: string, hint?: string) => (
    <div className="field">
      <label htmlFor={`export-${key}`}>{label}</label>
      <input
        id={`export-${key}`}
        type="date"
        value={values[key]}
        aria-describedby={hint ? `export-${key}-hint` : undefined}
        onChange={(e) => onChange({ ...values, [key]: e.target.value })}
      />
      {hint ? (
        <span id={`export-${key}-hint`} className="hint">
          {hint}
        </span>
      ) : null}
    </div>
  );
  return (
    <fieldset className="state-export-filters">
      <legend>Filters (optional: without them, the whole collection)</legend>
      {statuses.length ? (
        <fieldset className="checkbox-group">
          <legend>Status</legend>
          <ul>
            {statuses.map((status) => (
              <li key={status}>
                <label>
                  <input
                    type="checkbox"
                    checked={values.statuses.includes(status)}
                    onChange={(e) => toggle(status, e.target.checked)}
                  />{' '}
                  {status}
                </label>
              </li>
            ))}
          </ul>
        </fieldset>
      ) : null}
      {fields.map((field) => (
        <div className="field" key={field.name}>
          <label htmlFor={`export-${field.name}`}>{field.label}</label>
          <input
            id={`export-${field.name}`}
            inputMode={field.kind === 'integer' ? 'numeric' : undefined}
            spellCheck={false}
            value={values.fields[field.name] ?? ''}
            onChange={(e) =>
              onChange({ ...values, fields: { ...values.fields, [field.name]: e.target.value } })
            }
          />
        </div>
      ))}
      {day('createdFrom', 'Created from')}
      {day('createdTo', 'Created to', 'The last day, included.')}
      {day('changedSince', 'Changed since', 'Records created or changed on or after this day.')}
    </fieldset>
  );
}
