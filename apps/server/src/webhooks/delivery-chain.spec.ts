import type { EventType } from '@platform/contract';
import {
  type ChainedEndpoint,
  chainDeliveries,
  type ChainLink,
  type PreviousChange,
} from './delivery-chain';

/** An organization's feed: position n has type FEED[n - 1]. */
const FEED: EventType[] = [
  'student.created',
  'payment.created',
  'student.updated',
  'student.updated',
  'payment.succeeded',
  'student.deleted',
  'payment.created',
  'payment.succeeded',
];
const events = FEED.map((type, i) => ({
  id: `evt_${i + 1}`,
  organizationId: 'org_a',
  type,
  position: i + 1,
}));

const previousChange: PreviousChange = (_org, types, before, after) => {
  for (let p = before - 1; p > after; p -= 1)
    if (types.includes(FEED[p - 1]!)) return Promise.resolve(p);
  return Promise.resolve(null);
};

const payments: ChainedEndpoint = {
  id: 'we_pay',
  types: new Set(['payment.created', 'payment.succeeded']),
  readable: null,
  chainStart: 0,
};
const everything: ChainedEndpoint = {
  id: 'we_all',
  types: new Set(['*']),
  readable: null,
  chainStart: 1,
};

async function chains(batches: (typeof events)[]) {
  const links: ChainLink[] = [];
  for (const batch of batches)
    links.push(...(await chainDeliveries(batch, () => [payments, everything], previousChange)));
  const of = (id: string) =>
    links
      .filter((l) => l.endpointId === id)
      .map((l) => [l.event.position, l.previousPosition])
      .sort((a, b) => a[0]! - b[0]!);
  return { payments: of('we_pay'), everything: of('we_all') };
}

describe('delivery chains', () => {
  const expected = {
    payments: [
      [2, null],
      [5, 2],
      [7, 5],
      [8, 7],
    ],
    everything: [
      [1, null],
      ...events.slice(1).map((e) => [e.position, e.position - 1 > 1 ? e.position - 1 : null]),
    ],
  };

  it('link each delivery to the previous change its endpoint delivers, after its chain start', async () => {
    expect(await chains([events])).toEqual(expected);
  });

  it('are the same whatever batches fan the events out, in whatever order', async () => {
    const [a, b, c, d, e, f, g, h] = events;
    expect(
      await chains([
        [h!, b!],
        [f!, a!, g!],
        [e!, c!, d!],
      ]),
    ).toEqual(expected);
    expect(await chains([[g!, h!], [a!], [e!, d!, c!, b!, f!]])).toEqual(expected);
  });
});
