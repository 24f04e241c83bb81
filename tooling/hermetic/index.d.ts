/** A refused connection or DNS query, as the guard recorded it. */
export interface Violation {
  kind: string;
  target: string;
  detail: string;
  pid: number;
  argv: string[];
}

/** What every `*.test` host name resolves to: looks public to the SSRF guard, reaches nothing. */
export const TEST_HOST_ADDRESS: string;
export const LOG_DIR_ENV: string;
export const REGISTER: string;
export function install(): void;
export function enforceForRun(options?: { exitCheck?: boolean }): string;
export function childEnv(env?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
export function isLoopbackAddress(address: string): boolean;
/** The violations this worker (and its children) recorded since the last call; clears them. */
export function takeViolations(env?: NodeJS.ProcessEnv): Violation[];
export function violationsIn(dir: string): Violation[];
export function describeViolations(entries: Violation[]): string;
