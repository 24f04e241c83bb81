/**
 * Checks a webhook payload against the event's shape from generated/event-shapes.ts and names
 * each field that is wrong. Forward compatible, as the Python and PHP verifiers: unknown fields,
 * enum values this SDK does not know and nullable fields left out are accepted. Our own code, not a schema library: the verifier has a 5 KB budget
 * (gzipped) and zod alone is larger; the shapes are generated from the same model as the types.
 */
import { EVENT_DATA, EVENT_ENUMS, EVENT_ENVELOPE, EVENT_SHAPES } from './generated/event-shapes';

/** The model of an event type's `data`, or undefined for a type this SDK does not know. */
export function eventDataModel(type: string): string | undefined {
  return Object.prototype.hasOwnProperty.call(EVENT_DATA, type) ? EVENT_DATA[type] : undefined;
}

/** `path: message` for each problem found in an event of a known type, at most `limit`. */
export function checkEvent(
  event: Record<string, unknown>,
  dataModel: string,
  limit = 20,
): string[] {
  const issues: string[] = [];
  checkFields(event, EVENT_ENVELOPE, '', issues, limit);
  checkValue(event.data, `m:${dataModel}`, 'data', issues, limit);
  return issues;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'number' && !Number.isInteger(value) ? 'number' : typeof value;
}

function checkModel(value: unknown, model: string, path: string, issues: string[], limit: number) {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issues.push(`${path || '(payload)'}: Expected object, received ${describe(value)}`);
    return;
  }
  checkFields(value as Record<string, unknown>, EVENT_SHAPES[model] ?? [], path, issues, limit);
}

function checkFields(
  record: Record<string, unknown>,
  fields: readonly string[],
  path: string,
  issues: string[],
  limit: number,
) {
  for (const field of fields) {
    if (issues.length >= limit) return;
    const [name, spec] = field.split(' ') as [string, string];
    const at = path ? `${path}.${name}` : name;
    const optional = spec.includes('?');
    const nullable = spec.includes('|');
    const type = spec.replace(/[?|]+$/, '');
    const present = Object.prototype.hasOwnProperty.call(record, name);
    if (!present || record[name] === undefined) {
      // A nullable field a newer server leaves out reads as null: not an issue.
      if (!optional && !nullable) issues.push(`${at}: Required`);
      continue;
    }
    if (record[name] === null && nullable) continue;
    checkValue(record[name], type, at, issues, limit);
  }
}

function checkValue(value: unknown, type: string, at: string, issues: string[], limit: number) {
  const [kind, arg = ''] = [type.slice(0, 1), type.slice(2)];
  const expect = (expected: string) =>
    issues.push(`${at}: Expected ${expected}, received ${describe(value)}`);
  switch (kind) {
    case 's':
      if (typeof value !== 'string') expect('string');
      return;
    case 'i':
      if (typeof value !== 'number' || !Number.isInteger(value)) expect('integer');
      return;
    case 'n':
      if (typeof value !== 'number') expect('number');
      return;
    case 'b':
      if (typeof value !== 'boolean') expect('boolean');
      return;
    case 'u':
      return;
    case 'p':
      if (typeof value !== 'string') expect('string');
      else if (!new RegExp(`^${arg}_[0-9A-HJKMNP-TV-Z]{26}$`).test(value))
        issues.push(`${at}: must be an id of the form ${arg}_<ULID>`);
      return;
    case 'l':
      if (value !== arg) issues.push(`${at}: Expected '${arg}', received ${JSON.stringify(value)}`);
      return;
    case 'e': {
      // Enums are open on output: a value added by a newer server is a string like the others.
      if (typeof value !== 'string') {
        const values = EVENT_ENUMS[arg] ?? [];
        issues.push(
          `${at}: Expected one of ${values.join(', ')} (or a newer value), received ${JSON.stringify(value)}`,
        );
      }
      return;
    }
    case 'm':
      checkModel(value, arg, at, issues, limit);
      return;
    case 'a':
      if (!Array.isArray(value)) return expect('array');
      value.forEach((item, index) => checkValue(item, arg, `${at}.${index}`, issues, limit));
      return;
    case 'r':
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        return expect('object');
      for (const [name, item] of Object.entries(value))
        checkValue(item, arg, `${at}.${name}`, issues, limit);
      return;
  }
}
