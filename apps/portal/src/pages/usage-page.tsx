import { useCallback, useEffect, useRef, useState } from 'react';
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  Tooltip,
} from 'chart.js';
import type { PlatformClient, Usage } from '@platform/client';
import { classifyError, type Failure, formatDate } from '../api';
import { TableWrap } from '../components/list';
import { FailureNotice } from '../components/states';
import { PageHeading } from '../components/ui';

// Only the parts the two bar charts use, so the rest of Chart.js stays out of the bundle.
Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

interface Series {
  key: string;
  label: string;
  /** Light and dark theme colours, each readable on its background. */
  colour: [string, string];
}

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

type Hour = { hour: string } & Record<string, number | string>;

const count = (row: Hour, key: string) => Number(row[key] ?? 0);
const hourLabel = (iso: string) =>
  new Date(iso).toLocaleString(undefined, { weekday: 'short', hour: '2-digit', minute: '2-digit' });

/**
 * One stacked bar chart of hourly figures (Chart.js on a canvas), and its equivalent for screen
 * readers and for reading exact numbers: a summary sentence naming the canvas, and a table of the
 * hours that had any traffic.
 */
function HourlyChart({
  id,
  title,
  noun,
  hours,
  series,
}: {
  id: string;
  title: string;
  noun: string;
  hours: Hour[];
  series: Series[];
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const totals = series.map((s) => hours.reduce((sum, h) => sum + count(h, s.key), 0));
  const busy = hours.filter((h) => series.some((s) => count(h, s.key) > 0));
  const summary = `${title}, last 7 days by hour: ${series
    .map((s, i) => `${totals[i]} ${s.label.toLowerCase()}`)
    .join(', ')}.`;

  useEffect(() => {
    if (!canvas.current) return;
    const dark = window.matchMedia('(prefers-color-scheme: dark)').matches;
    const text = getComputedStyle(document.documentElement).getPropertyValue('--text').trim();
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: {
        labels: hours.map((h) => hourLabel(h.hour)),
        datasets: series.map((s) => ({
          label: s.label,
          data: hours.map((h) => count(h, s.key)),
          backgroundColor: s.colour[dark ? 1 : 0],
          stack: 'all',
        })),
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        scales: {
          x: { stacked: true, ticks: { color: text, maxTicksLimit: 7, autoSkip: true } },
          y: { stacked: true, beginAtZero: true, ticks: { color: text, precision: 0 } },
        },
        plugins: { legend: { labels: { color: text } } },
      },
    });
    return () => chart.destroy();
  }, [hours, series]);

  return (
    <section aria-labelledby={`${id}-heading`} className="usage-chart">
      <h2 id={`${id}-heading`}>{title}</h2>
      <p id={`${id}-summary`}>{summary}</p>
      <div className="chart-box">
        <canvas ref={canvas} role="img" aria-labelledby={`${id}-summary`} />
      </div>
      <details>
        <summary>{title} as a table</summary>
        {busy.length === 0 ? (
          <p>No {noun} in the last 7 days.</p>
        ) : (
          <HourlyTable title={title} noun={noun} hours={busy} series={series} />
        )}
      </details>
    </section>
  );
}

/** The hours that had any traffic, newest first, one column a series. */
function HourlyTable({
  title,
  noun,
  hours,
  series,
}: {
  title: string;
  noun: string;
  hours: Hour[];
  series: Series[];
}) {
  return (
    <TableWrap label={`${title} per hour table`}>
      <table>
        <caption className="visually-hidden">
          {title} per hour, hours with {noun} only, newest first
        </caption>
        <thead>
          <tr>
            <th scope="col">Hour</th>
            {series.map((s) => (
              <th scope="col" key={s.key}>
                {s.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {[...hours].reverse().map((h) => (
            <tr key={h.hour}>
              <th scope="row">{formatDate(h.hour)}</th>
              {series.map((s) => (
                <td key={s.key}>{count(h, s.key)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

/** The organization's requests and webhook deliveries per hour, last 7 days (GET /v1/usage). */
export function UsagePage({ client }: { client: PlatformClient }) {
  const [usage, setUsage] = useState<Usage | null>(null);
  const [failure, setFailure] = useState<Failure | null>(null);

  const load = useCallback(() => {
    setFailure(null);
    client.usage.retrieve().then(setUsage, (error: unknown) => setFailure(classifyError(error)));
  }, [client]);
  useEffect(load, [load]);

  return (
    <>
      <PageHeading>Usage</PageHeading>
      <p>
        Your organization’s API requests and webhook deliveries per hour over the last 7 days.
        Requests appear about a second after they are answered.
      </p>
      {failure ? <FailureNotice failure={failure} onRetry={load} /> : null}
      {usage === null ? (
        failure ? null : (
          <p>Loading…</p>
        )
      ) : (
        <>
          <HourlyChart
            id="usage-requests"
            title="API requests"
            noun="requests"
            hours={usage.requests as unknown as Hour[]}
            series={REQUEST_SERIES}
          />
          <HourlyChart
            id="usage-deliveries"
            title="Webhook deliveries"
            noun="deliveries"
            hours={usage.webhook_deliveries as unknown as Hour[]}
            series={DELIVERY_SERIES}
          />
        </>
      )}
    </>
  );
}
