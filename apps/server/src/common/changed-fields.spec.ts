import { changedFields } from './changed-fields';

describe('changedFields', () => {
  it('gives each changed top-level field with its value before, and nothing else', () => {
    const before = { id: 'stu_1', email: 'old@x', grade_level: 3, updated_at: 'T1' };
    const after = { id: 'stu_1', email: 'new@x', grade_level: 3, updated_at: 'T2' };
    expect(changedFields(before, after)).toEqual({ email: 'old@x', updated_at: 'T1' });
  });

  it('keeps a null before, and tells null from absent and from a value', () => {
    expect(changedFields({ email: null }, { email: 'a@x' })).toEqual({ email: null });
    expect(changedFields({ email: 'a@x' }, { email: null })).toEqual({ email: 'a@x' });
    expect(changedFields({ email: null }, { email: null })).toEqual({});
  });

  it('gives a nested value whole when any part of it changed', () => {
    const before = { metadata: { a: 1, b: 2 }, tags: ['x'] };
    expect(changedFields(before, { metadata: { a: 1, b: 3 }, tags: ['x'] })).toEqual({
      metadata: { a: 1, b: 2 },
    });
    expect(changedFields(before, { metadata: { a: 1, b: 2 }, tags: ['x'] })).toEqual({});
  });
});
