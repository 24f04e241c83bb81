/** `YYYY-MM-DD` of the local day `instant` falls on. */
function localDay(instant: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${instant.getFullYear()}-${pad(instant.getMonth() + 1)}-${pad(instant.getDate())}`;
}

/** The instant the local day `day` (`YYYY-MM-DD`) starts, `offset` days later, as ISO 8601. */
function dayStart(day: string, offset = 0): string | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!match) return null;
  const [, y, m, d] = match.map(Number) as [number, number, number, number];
  return new Date(y, m - 1, d + offset).toISOString();
}

function parsed(value: string | null): Date | null {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

/**
 * The days an entry was made in, in the member's own time zone: "From" is the first day,
 * "To" the last one, whole. They go to the URL and the API as the instants `created_at[gte]`
 * (the first day's start) and `created_at[lt]` (the start of the day after the last).
 */
export function DateRange({
  from,
  until,
  onChange,
}: {
  from: string | null;
  until: string | null;
  onChange: (gte: string | null, lt: string | null) => void;
}) {
  const start = parsed(from);
  const end = parsed(until);
  const fromDay = start ? localDay(start) : '';
  const toDay = end ? localDay(new Date(end.getTime() - 1)) : '';
  return (
    <fieldset className="audit-dates">
      <legend>Date range</legend>
      <div className="field filter">
        <label htmlFor="audit-from">From</label>
        <input
          id="audit-from"
          type="date"
          value={fromDay}
          max={toDay || undefined}
          onChange={(e) => onChange(dayStart(e.target.value), until)}
        />
      </div>
      <div className="field filter">
        <label htmlFor="audit-to">To</label>
        <input
          id="audit-to"
          type="date"
          value={toDay}
          min={fromDay || undefined}
          onChange={(e) => onChange(from, dayStart(e.target.value, 1))}
        />
      </div>
      {from || until ? (
        <button type="button" onClick={() => onChange(null, null)}>
          Any date
        </button>
      ) : null}
    </fieldset>
  );
}
