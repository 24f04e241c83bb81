import { useEffect, useRef } from 'react';
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  Tooltip,
} from 'chart.js';
import type { UsageRange } from '@platform/client';
import { TableWrap } from '../components/list';

// Only the parts the two bar charts use, so the rest of Chart.js stays out of the bundle.
Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

export interface Series {
  key: string;
  label: string;
  /** Light and dark theme colours, each readable on its background. */
  colour: [string, string];
}

export type Bin = { start: string } & Record<string, number | string>;

/** How each range is said, and what one bin of it is. */
export const RANGES: Record<UsageRange, { label: string; text: string; bin: string }> = {
  hour: { label: 'Hour', text: 'last hour by minute', bin: 'Minute' },
  day: { label: 'Day', text: 'last 24 hours by hour', bin: 'Hour' },
  week: { label: 'Week', text: 'last 7 days by hour', bin: 'Hour' },
  '30d': { label: '30 days', text: 'last 30 days by day', bin: 'Day' },
};

const count = (row: Bin, key: string) => Number(row[key] ?? 0);
const time = (date: Date) =>
  date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
/** Days are UTC bins: shown as the UTC date they are. */
const day = (date: Date, weekday = false) =>
  date.toLocaleDateString(undefined, {
    ...(weekday && { weekday: 'short' }),
    month: 'short',
    day: 'numeric',
    timeZone: 'UTC',
  });

/** A bin's full name (the tooltip's title, the table's row header). */
export function binLabel(range: UsageRange, iso: string): string {
  const date = new Date(iso);
  if (range === 'hour') return time(date);
  if (range === '30d') return day(date, true);
  return `${date.toLocaleDateString(undefined, { weekday: 'short' })} ${time(date)}`;
}

/**
 * The axis label of bin `index`, or null for none (Chart.js then draws neither the label nor its
 * gridline, so every gridline has its label under it): round times only, fewer on a phone.
 */
function tickLabel(range: UsageRange, bins: Bin[], index: number, narrow: boolean): string | null {
  const date = new Date(bins[index]!.start);
  switch (range) {
    case 'hour':
      return date.getMinutes() % (narrow ? 15 : 10) === 0 ? time(date) : null;
    case 'day':
      return date.getHours() % (narrow ? 6 : 3) === 0 ? time(date) : null;
    case 'week':
      return date.getHours() === 0
        ? date.toLocaleDateString(
            undefined,
            narrow ? { weekday: 'short' } : { weekday: 'short', day: 'numeric' },
          )
        : null;
    case '30d':
      return (bins.length - 1 - index) % (narrow ? 7 : 5) === 0 ? day(date) : null;
  }
}

/** The stacked bar chart on `target`, in the theme's colours, labelled for the screen's width. */
function drawChart(target: HTMLCanvasElement, range: UsageRange, bins: Bin[], series: Series[]) {
  const dark = window.matchMedia('(prefers-color-scheme: dark)').matches;
  const narrow = window.matchMedia('(max-width: 40rem)').matches;
  const style = getComputedStyle(document.documentElement);
  const text = style.getPropertyValue('--text').trim();
  const grid = style.getPropertyValue('--border').trim();
  return new Chart(target, {
    type: 'bar',
    data: {
      labels: bins.map((h) => binLabel(range, h.start)),
      datasets: series.map((s) => ({
        label: s.label,
        data: bins.map((h) => count(h, s.key)),
        backgroundColor: s.colour[dark ? 1 : 0],
        stack: 'all',
        barPercentage: 0.9,
        categoryPercentage: 1,
      })),
    },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      scales: {
        x: {
          stacked: true,
          // Gridlines through the labelled bins, not between bars.
          grid: { offset: false, color: grid },
          ticks: {
            color: text,
            autoSkip: false,
            maxRotation: 0,
            callback: (_value, index) => tickLabel(range, bins, index, narrow),
          },
        },
        y: {
          stacked: true,
          beginAtZero: true,
          grid: { color: grid },
          ticks: { color: text, precision: 0 },
        },
      },
      plugins: { legend: { labels: { color: text, boxWidth: 12 } } },
    },
  });
}

/**
 * One stacked bar chart of the range's bins (Chart.js on a canvas), and its equivalent for screen
 * readers and for reading exact numbers: a summary sentence naming the canvas, and a table of the
 * bins that had any traffic.
 */
export function BinChart({
  id,
  title,
  noun,
  range,
  bins,
  series,
}: {
  id: string;
  title: string;
  noun: string;
  range: UsageRange;
  bins: Bin[];
  series: Series[];
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const totals = series.map((s) => bins.reduce((sum, h) => sum + count(h, s.key), 0));
  const busy = bins.filter((h) => series.some((s) => count(h, s.key) > 0));
  const summary = `${title}, ${RANGES[range].text}: ${series
    .map((s, i) => `${totals[i]} ${s.label.toLowerCase()}`)
    .join(', ')}.`;

  useEffect(() => {
    if (!canvas.current) return;
    const chart = drawChart(canvas.current, range, bins, series);
    return () => chart.destroy();
  }, [bins, series, range]);

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
          <p>No {noun} in this range.</p>
        ) : (
          <BinTable title={title} noun={noun} range={range} bins={busy} series={series} />
        )}
      </details>
    </section>
  );
}

/** The bins that had any traffic, newest first, one column a series. */
function BinTable({
  title,
  noun,
  range,
  bins,
  series,
}: {
  title: string;
  noun: string;
  range: UsageRange;
  bins: Bin[];
  series: Series[];
}) {
  const unit = RANGES[range].bin;
  return (
    <TableWrap label={`${title} per ${unit.toLowerCase()} table`}>
      <table>
        <caption className="visually-hidden">
          {title} per {unit.toLowerCase()}, those with {noun} only, newest first
        </caption>
        <thead>
          <tr>
            <th scope="col">{unit}</th>
            {series.map((s) => (
              <th scope="col" key={s.key}>
                {s.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {[...bins].reverse().map((h) => (
            <tr key={h.start}>
              <th scope="row">{binLabel(range, h.start)}</th>
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
