import { contract } from './contract';
import { EVENT_CATALOG, EVENT_READ_SCOPES, EVENT_TYPES } from './events';
import { EXPORT_COLLECTION_SCOPES, EXPORT_COLLECTIONS } from './exports';
import { ID_PREFIXES } from './ids';
import {
  deleteRefusal,
  referencedBy,
  RESOURCE_NAMES,
  resourceContractKey,
  RESOURCES,
} from './registry';
import { SCOPE_RESOURCES } from './scopes';

describe('the resource registry', () => {
  it('gives every resource an id prefix of its own, alongside the API objects', () => {
    const prefixes = Object.values(ID_PREFIXES);
    expect(new Set(prefixes).size).toBe(prefixes.length);
    for (const name of RESOURCE_NAMES) {
      const { singular, prefix } = RESOURCES[name];
      expect(ID_PREFIXES).toHaveProperty(singular, prefix);
      expect(prefix).toMatch(/^[a-z]{3}$/);
    }
    expect(ID_PREFIXES).toHaveProperty('webhook_endpoint', 'whe');
  });

  it('makes each resource scope a scope of the API', () => {
    for (const name of RESOURCE_NAMES)
      expect(SCOPE_RESOURCES as readonly string[]).toContain(RESOURCES[name].scope);
  });

  it('declares each event type once, read with its resource scope, with a schema', () => {
    for (const name of RESOURCE_NAMES) {
      const { singular, scope, events } = RESOURCES[name];
      for (const event of events) {
        const type = `${singular}.${event}` as keyof typeof EVENT_READ_SCOPES;
        expect(EVENT_READ_SCOPES[type]).toBe(`${scope}:read`);
        expect(EVENT_CATALOG).toHaveProperty([type]);
      }
    }
    const declared = RESOURCE_NAMES.flatMap((n) =>
      RESOURCES[n].events.map((e) => `${RESOURCES[n].singular}.${e}`),
    );
    expect(EVENT_TYPES.filter((t) => t !== 'ping')).toEqual(declared);
  });

  it('exports the collections it marks exported, each behind its read scope', () => {
    expect(EXPORT_COLLECTIONS).toEqual(RESOURCE_NAMES.filter((n) => RESOURCES[n].exported));
    expect(EXPORT_COLLECTION_SCOPES.exams).toBe('exam_results:read');
    expect(EXPORT_COLLECTION_SCOPES.students).toBe('students:read');
  });

  it("names in a delete refusal every resource that refers to the record, in the registry's order", () => {
    expect(referencedBy('students')).toBe('enrollments, payments or exam results');
    expect(referencedBy('exams')).toBe('exam results');
    expect(referencedBy('payments')).toBe('other records');
    expect(deleteRefusal('courses', 'archive it')).toEqual({
      referencedBy: 'enrollments or exams',
      instead: 'archive it',
    });
  });

  it('finds each resource in the router, references to resources that exist', () => {
    for (const name of RESOURCE_NAMES) {
      expect(contract).toHaveProperty([resourceContractKey(name), 'list']);
      for (const ref of RESOURCES[name].references)
        expect(RESOURCE_NAMES as readonly string[]).toContain(ref);
    }
    expect(resourceContractKey('exam_results')).toBe('examResults');
  });
});
