import { EXPORT_COLLECTIONS as CONTRACT_COLLECTIONS } from '@platform/contract';
import { EXPORT_COLLECTIONS } from './index';

describe('EXPORT_COLLECTIONS', () => {
  it("is the contract's exported collections, in its order, for a form that offers them", () => {
    expect(EXPORT_COLLECTIONS).toEqual(CONTRACT_COLLECTIONS);
    expect(EXPORT_COLLECTIONS).toContain('exam_results');
  });
});
