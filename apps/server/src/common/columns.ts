import type { ValueTransformer } from 'typeorm';

/**
 * PostgreSQL `bigint` arrives from node-pg as a string (it can exceed 2^53); our amounts are
 * bounded far below that (MAX_AMOUNT), so they are read back as numbers.
 */
export const bigintAsNumber: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | number | null) => (value === null ? null : Number(value)),
};
