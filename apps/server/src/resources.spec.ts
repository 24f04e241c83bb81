import { RESOURCE_NAMES, RESOURCES } from '@platform/contract';
import { resourcesReferrersFirst } from './resources';

describe('resourcesReferrersFirst', () => {
  it('orders every resource once, each before everything it refers to', () => {
    const order = resourcesReferrersFirst();
    expect([...order].sort()).toEqual([...RESOURCE_NAMES].sort());
    for (const name of RESOURCE_NAMES) {
      for (const referenced of RESOURCES[name].references) {
        expect(order.indexOf(name)).toBeLessThan(order.indexOf(referenced));
      }
    }
  });
});
