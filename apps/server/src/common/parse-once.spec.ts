import { z } from 'zod';
import { parseAhead } from './parse-once';

/** A schema that counts how many times it ran over a value. */
function counted() {
  const runs = { n: 0 };
  const schema = z.object({ items: z.array(z.number()) }).superRefine(() => {
    runs.n += 1;
  });
  return { schema, runs };
}

describe('parseAhead', () => {
  it('hands its result to the next parse of the same object, which does not run again', () => {
    const { schema, runs } = counted();
    const body = { items: [1, 2, 3] };
    const first = parseAhead(schema, body);
    const second = schema.safeParse(body);
    expect(second).toBe(first);
    expect(second.success && second.data).toEqual({ items: [1, 2, 3] });
    expect(runs.n).toBe(1);
  });

  it('keeps a failure the same way, with its issues', () => {
    const { schema, runs } = counted();
    const body = { items: ['one'] };
    expect(parseAhead(schema, body).success).toBe(false);
    const again = schema.safeParse(body);
    expect(again.success).toBe(false);
    expect(!again.success && again.error.issues[0]?.path).toEqual(['items', 0]);
    expect(runs.n).toBe(0);
  });

  it('keeps a result once: a third parse runs the schema again', () => {
    const { schema, runs } = counted();
    const body = { items: [1] };
    parseAhead(schema, body);
    schema.safeParse(body);
    schema.safeParse(body);
    expect(runs.n).toBe(2);
  });

  it('parses another object, or the same one changed into a new object, afresh', () => {
    const { schema, runs } = counted();
    parseAhead(schema, { items: [1] });
    const other = schema.safeParse({ items: ['x'] });
    expect(other.success).toBe(false);
    expect(runs.n).toBe(1);
  });

  it('gives another schema, or a parse with its own options, nothing kept', () => {
    const { schema, runs } = counted();
    const strict = z.object({ items: z.array(z.number()).max(1) });
    const body = { items: [1, 2] };
    parseAhead(schema, body);
    expect(strict.safeParse(body).success).toBe(false);
    parseAhead(schema, body);
    const withOptions = schema.safeParse(body, { path: ['body'] });
    expect(withOptions.success).toBe(true);
    expect(runs.n).toBe(3);
  });

  it('leaves a schema built from a watched one parsing on its own', () => {
    const { schema } = counted();
    const body = { items: [1] };
    parseAhead(schema, body);
    const wrapper = z.object({ body: schema });
    expect(wrapper.safeParse({ body: { items: ['x'] } }).success).toBe(false);
    expect(schema.safeParse(body).success).toBe(true);
  });
});
