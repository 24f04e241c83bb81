import { dateTimeInput } from './date-time';

describe(dateTimeInput.name, () => {
  const sut = dateTimeInput('updated_since');

  it.each([
    ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00.000Z'],
    ['2026-01-01T01:00:00+01:00', '2026-01-01T00:00:00.000Z'],
    ['2026-01-01T00:00:00+23:59', '2025-12-31T00:01:00.000Z'],
    ['2026-01-01T00:00:00-23:59', '2026-01-01T23:59:00.000Z'],
    ['2026-01-01T00:00:00-00:00', '2026-01-01T00:00:00.000Z'],
    ['2024-02-29T12:00:00.5+05:45', '2024-02-29T06:15:00.500Z'],
    ['0000-01-01T00:00:00Z', '0000-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
  ])('reads %s as the instant %s', (input, utc) => {
    expect(sut.parse(input)).toBe(utc);
  });

  it.each([
    ['2020-01-01T00:00:00+99:99', 'offset is Z or between -23:59 and +23:59 (got +99:99)'],
    ['2020-01-01T00:00:00+24:00', 'offset is Z or between -23:59 and +23:59 (got +24:00)'],
    ['2020-01-01T00:00:00-23:60', 'offset is Z or between -23:59 and +23:59 (got -23:60)'],
    ['2020-01-01T00:00:00+0099', 'offset is Z or between -23:59 and +23:59 (got +0099)'],
    ['2020-02-30T00:00:00Z', 'RFC 3339 date-time'],
    ['2021-02-29T00:00:00Z', 'RFC 3339 date-time'],
    ['2020-01-01T24:00:00Z', 'RFC 3339 date-time'],
    ['2020-01-01T23:60:00Z', 'RFC 3339 date-time'],
    ['2020-13-01T00:00:00Z', 'RFC 3339 date-time'],
    ['9999-12-31T23:59:59-00:01', 'instant between 0000-01-01T00:00:00.000Z and 9999-12-31'],
    ['0000-01-01T00:00:00+00:01', 'instant between 0000-01-01T00:00:00.000Z and 9999-12-31'],
  ])('refuses %s, naming the parameter', (input, message) => {
    const result = sut.safeParse(input);
    expect(result.success).toBe(false);
    expect(result.error?.issues).toHaveLength(1);
    expect(result.error?.issues[0]?.message).toMatch(/^updated_since must be an /);
    expect(result.error?.issues[0]?.message).toContain(message);
  });

  it('leaves the naming of a body field to its path', () => {
    const result = dateTimeInput().safeParse('2020-01-01T00:00:00+24:00');
    expect(result.error?.issues[0]?.message).toMatch(/^must be an RFC 3339 date-time whose offset/);
  });
});
