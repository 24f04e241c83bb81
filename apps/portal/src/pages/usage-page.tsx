import { useCallback, useEffect, useState } from 'react';
import type { PlatformClient, Usage, UsageRange } from '@platform/client';
import { classifyError, type Failure } from '../api';
import { FailureNotice } from '../components/states';
import { PageHeading } from '../components/ui';
import { setSearch, useSearch } from '../router';
import { type Bin, BinChart, RANGES, type Series } from './usage-chart';
import { UsageBreakdowns } from './usage-breakdown';

const REQUEST_SERIES: Series[] = [
  { key: 'success', label: 'Success (2xx)', colour: ['#1a7f37', '#56d364'] },
  { key: 'client_error', label: 'Client error (4xx)', colour: ['#9a6700', '#e3b341'] },
  { key: 'rate_limited', label: 'Rate limited (429)', colour: ['#8250df', '#d2a8ff'] },
  { key: 'server_error', label: 'Server error (5xx)', colour: ['#a4161a', '#ff8a8a'] },
];
const DELIVERY_SERIES: Series[] = [
  { key: 'succeeded', label: 'Succeeded', colour: ['#1a7f37', '#56d364'] },
  { key: 'failed', label: 'Failed', colour: ['#a4161a', '#ff8a8a'] },
];

/** The page opens on the last 24 hours: recent traffic is a bar you can see, not a sliver. */
const DEFAULT_RANGE: UsageRange = 'day';
const isRange = (value: string | null): value is UsageRange =>
  value !== null && Object.prototype.hasOwnProperty.call(RANGES, value);

/** The range as a group of radio buttons; the choice is the URL's `range`. */
function RangePicker({ range }: { range: UsageRange }) {
  const choose = (next: UsageRange) => {
    const search = new URLSearchParams(location.search);
    if (next === DEFAULT_RANGE) search.delete('range');
    else search.set('range', next);
    setSearch(search);
  };
  return (
    <fieldset className="usage-range">
      <legend>Range</legend>
      {(Object.keys(RANGES) as UsageRange[]).map((value) => (
        <label key={value}>
          <input
            type="radio"
            name="usage-range"
            value={value}
            checked={value === range}
            onChange={() => choose(value)}
          />
          <span>{RANGES[value].label}</span>
        </label>
      ))}
    </fieldset>
  );
}

/**
 * The organization's requests and webhook deliveries over a range (an hour by minute, a day or a
 * week by hour, 30 days by day), and the requests by token, route and status (GET /v1/usage).
 */
export function UsagePage({ client }: { client: PlatformClient }) {
  const asked = useSearch().get('range');
  const range = isRange(asked) ? asked : DEFAULT_RANGE;
  const [usage, setUsage] = useState<Usage | null>(null);
  const [failure, setFailure] = useState<Failure | null>(null);

  const load = useCallback(() => {
    setFailure(null);
    let current = true;
    client.usage.retrieve({ range }).then(
      (answer) => current && setUsage(answer),
      (error: unknown) => current && setFailure(classifyError(error)),
    );
    return () => {
      current = false;
    };
  }, [client, range]);
  useEffect(load, [load]);
  const shown = usage?.range === range ? usage : null;

  return (
    <>
      <PageHeading>Usage</PageHeading>
      <p>
        Your organization’s API requests and webhook deliveries, in UTC bins. Requests appear about
        a second after they are answered.
      </p>
      <RangePicker range={range} />
      {failure ? <FailureNotice failure={failure} onRetry={load} /> : null}
      {shown === null ? (
        failure ? null : (
          <p role="status">Loading…</p>
        )
      ) : (
        <>
          <BinChart
            id="usage-requests"
            title="API requests"
            noun="requests"
            range={range}
            bins={shown.requests as unknown as Bin[]}
            series={REQUEST_SERIES}
          />
          <UsageBreakdowns breakdown={shown.breakdown} />
          <BinChart
            id="usage-deliveries"
            title="Webhook deliveries"
            noun="deliveries"
            range={range}
            bins={shown.webhook_deliveries as unknown as Bin[]}
            series={DELIVERY_SERIES}
          />
        </>
      )}
    </>
  );
}
