import { EVENT_TYPES } from '@platform/contract';
import { WEBHOOK_EVENT_TYPES } from './index';

describe('WEBHOOK_EVENT_TYPES', () => {
  it("is the contract's event catalogue, in its order, without the test-only ping", () => {
    expect(WEBHOOK_EVENT_TYPES).toEqual(EVENT_TYPES.filter((type) => type !== 'ping'));
    expect(WEBHOOK_EVENT_TYPES).toContain('exam_result.published');
  });
});
