/**
 * The scale-out dispatcher's Redis statements (`QueuedWebhookDispatcher`): the semaphore scripts,
 * their keys, and the calls that pass them their arguments. The dispatcher holds the control flow.
 */
import type { Redis } from 'ioredis';
import type { WebhookConfig } from '../config/env';

/**
 * LAPSE, a part of ADMIT and ROOM (after their `now`): `lapse(key)` notes in `soonest` how many ms
 * until the first hold of a full semaphore runs out. A holder that dies never frees its slot, so
 * nothing wakes a relay waiting for it; the relay looks again when that hold lapses instead.
 */
const LAPSE = `
local soonest = -1
local function lapse(key)
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if first[2] then
    local wait = tonumber(first[2]) - now
    if soonest < 0 or wait < soonest then soonest = wait end
  end
end
`;

/**
 * Redis semaphores, shared by every instance: one for all deliveries (WEBHOOK_CONCURRENCY), one
 * per organization and one per endpoint. Each holder (a message id) sits in a sorted set scored by
 * when its hold expires, so a holder that died frees its slot when the hold runs out. The relay
 * takes all three slots for a message before queueing it, so the queue only ever holds deliveries
 * that may run now, and a job carrying many messages never runs more than their limits allow.
 *
 * KEYS: the global semaphore, then each candidate's organization and endpoint semaphores, in
 * pairs, oldest candidate first. ARGV: global, organization and endpoint limits, hold (ms), most
 * to admit, then the message ids, then each candidate's endpoint limit (its fair share of its
 * organization's slots and narrowed for an endpoint timing out: `fairShares`, `EndpointPacing`).
 * Returns a code per candidate: 1 admitted, 2 organization full, 3 endpoint full, 4 all slots
 * taken (nothing after it is looked at), 0 not looked at; then LAPSE's wait for the semaphores
 * found full (-1 if none).
 * A message that already holds its slots (queued again after its lease ran out) renews them.
 */
const ADMIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
${LAPSE}
local global = KEYS[1]
local globalLimit, organizationLimit = tonumber(ARGV[1]), tonumber(ARGV[2])
local endpointLimit, hold, most = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', global, '-inf', now)
local pruned, codes, admitted, stop = {}, {}, 0, false
local n = (#KEYS - 1) / 2
for i = 1, n do
  local organization, endpoint, id = KEYS[2 * i], KEYS[2 * i + 1], ARGV[5 + i]
  local ownLimit = tonumber(ARGV[5 + n + i]) or endpointLimit
  local code = 0
  if admitted < most and not stop then
    for _, key in ipairs({ organization, endpoint }) do
      if not pruned[key] then
        redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
        pruned[key] = true
      end
    end
    code = 1
    if not redis.call('ZSCORE', endpoint, id) then
      if redis.call('ZCARD', global) >= globalLimit then
        code = 4
        stop = true
        lapse(global)
      else
        local ofOrganization = redis.call('ZCARD', organization)
        local ofEndpoint = redis.call('ZCARD', endpoint)
        if ofOrganization >= organizationLimit then
          code = 2
          lapse(organization)
        elseif ofEndpoint >= ownLimit then
          code = 3
          lapse(endpoint)
        end
      end
    end
    if code == 1 then
      for _, key in ipairs({ global, organization, endpoint }) do
        redis.call('ZADD', key, now + hold, id)
        redis.call('PEXPIRE', key, hold)
      end
      admitted = admitted + 1
    end
  end
  codes[i] = code
end
codes[n + 1] = soonest
return codes
`;

/**
 * A worker takes its job's messages when it starts them: each message is marked as this job's
 * (KEYS: the global semaphore, then per message its organization's and endpoint's semaphores and
 * its mark) and its holds renewed, so the attempt gets the whole hold. A message marked by another
 * job that is still alive (queued twice: its lease ran out while its first job waited) is left to
 * that job (code 0); the same job run again after its worker died takes it back (code 1).
 * A message whose hold ran out while its job waited (a job of a killed worker waits for BullMQ's
 * stalled-job check) has lost its slots, which others may have taken since: it takes them again
 * only within the limits, as ADMIT would, else it is left out (code 0) and delivered when its
 * lease runs out and the relay queues it again.
 * ARGV: the job id, hold (ms), the global, organization and endpoint limits, then the message ids.
 */
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local job, hold = ARGV[1], tonumber(ARGV[2])
local globalLimit, organizationLimit, endpointLimit = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local codes = {}
for i = 1, (#KEYS - 1) / 3 do
  local organization, endpoint, mark, id = KEYS[3 * i - 1], KEYS[3 * i], KEYS[3 * i + 1], ARGV[5 + i]
  local owner = redis.call('GET', mark)
  local held = redis.call('ZSCORE', endpoint, id)
  local lapsed = not held or tonumber(held) <= now
  if lapsed then
    for _, key in ipairs({ KEYS[1], organization, endpoint }) do
      redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
    end
  end
  if owner and owner ~= job then
    codes[i] = 0
  elseif lapsed and (redis.call('ZCARD', KEYS[1]) >= globalLimit
      or redis.call('ZCARD', organization) >= organizationLimit
      or redis.call('ZCARD', endpoint) >= endpointLimit) then
    codes[i] = 0
  else
    redis.call('SET', mark, job, 'PX', hold)
    for _, key in ipairs({ KEYS[1], organization, endpoint }) do
      redis.call('ZADD', key, now + hold, id)
      redis.call('PEXPIRE', key, hold)
    end
    codes[i] = 1
  end
end
return codes
`;

/**
 * Frees the slots of messages (KEYS as for TAKE; ARGV: whether to drop the marks too, 1 or 0,
 * then per message its id and the job id), unless another job has taken the message since: its
 * slots are that job's now. A message's slots go when its request ends (they bound requests in
 * flight); its mark stays until its attempt is written (mark 1), so no second job sends it while
 * the attempt may still be unwritten.
 */
const RELEASE = `
local marks = ARGV[1] == '1'
for i = 1, (#KEYS - 1) / 3 do
  local organization, endpoint, mark = KEYS[3 * i - 1], KEYS[3 * i], KEYS[3 * i + 1]
  local id, job = ARGV[2 * i], ARGV[2 * i + 1]
  local owner = redis.call('GET', mark)
  if not owner or owner == job then
    redis.call('ZREM', KEYS[1], id)
    redis.call('ZREM', organization, id)
    redis.call('ZREM', endpoint, id)
    if owner and marks then redis.call('DEL', mark) end
  end
end
return 1
`;

/**
 * How many global slots are free (KEYS[1], ARGV[1] its limit), and which of the other KEYS
 * (semaphores; ARGV: the limit of each) are still full: the relay asks this before a step, to
 * leave out of its first read the organizations and endpoints it found full last time (the
 * admission, later in the step, counts the free slots). Returns the free slots, LAPSE's wait for
 * the full ones (-1 if none), then the indexes of the full keys.
 */
const ROOM = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
${LAPSE}
local result = { 0, -1 }
for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  local count = redis.call('ZCARD', KEYS[i])
  if i == 1 then
    result[1] = tonumber(ARGV[1]) - count
  elseif count >= tonumber(ARGV[i]) then
    lapse(KEYS[i])
    result[#result + 1] = i - 1
  end
end
result[2] = soonest
return result
`;

/**
 * Renews the holds of this instance's messages (KEYS: the global semaphore, then per message its
 * organization's and endpoint's semaphores and its mark; ARGV: hold (ms), then per message its
 * id, the job here that marked it ('' for none) and the job the relay here queued it as ('' while
 * not known)). Only holds that still hold (neither freed nor lapsed) are renewed, and a mark only
 * while it is that job's: what was freed, lapsed or taken over meanwhile stays so. A message this
 * instance queued that its queued job has marked is that job's to renew: it is left alone, so the
 * slots of a worker that died taking it lapse with the worker's renewals, not this instance's. The
 * mark of another job (an earlier run of a message queued again) does not stop the renewals.
 * Returns a code per message: 1 renewed (or nothing left to renew), 0 taken by its queued job.
 */
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local hold = tonumber(ARGV[1])
local codes = {}
for i = 1, (#KEYS - 1) / 3 do
  local organization, endpoint, mark = KEYS[3 * i - 1], KEYS[3 * i], KEYS[3 * i + 1]
  local id, job, queued = ARGV[3 * i - 1], ARGV[3 * i], ARGV[3 * i + 1]
  local owner = redis.call('GET', mark)
  if job == '' and queued ~= '' and owner == queued then
    codes[i] = 0
  else
    for _, key in ipairs({ KEYS[1], organization, endpoint }) do
      local held = redis.call('ZSCORE', key, id)
      if held and tonumber(held) > now then
        redis.call('ZADD', key, now + hold, id)
        redis.call('PEXPIRE', key, hold)
      end
    end
    if job ~= '' and owner == job then redis.call('PEXPIRE', mark, hold) end
    codes[i] = 1
  end
end
return codes
`;

interface SemaphoreCommands {
  platformRenew(...keysThenArgs: (string | number)[]): Promise<number[]>;
  platformRoom(...keysThenArgs: (string | number)[]): Promise<number[]>;
  platformAdmit(...keysThenArgs: (string | number)[]): Promise<number[]>;
  platformTake(...keysThenArgs: (string | number)[]): Promise<number[]>;
  platformRelease(...keysThenArgs: (string | number)[]): Promise<number>;
}

/** A message as the semaphores know it: its id, organization and endpoint. */
export interface SlotHolder {
  id: string;
  organizationId: string;
  endpointId: string;
}

/**
 * The semaphore scripts, defined on a Redis connection, and their calls with the keys (under the
 * deployment's prefix) and limits (WEBHOOK_CONCURRENCY and the per-organization and per-endpoint
 * ones) each takes.
 */
export class DeliverySemaphores {
  private readonly commands: SemaphoreCommands;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly config: WebhookConfig,
    private readonly holdMs: number,
  ) {
    // The scripts' key counts vary with the messages: each call passes its count first.
    redis.defineCommand('platformAdmit', { lua: ADMIT });
    redis.defineCommand('platformTake', { lua: TAKE });
    redis.defineCommand('platformRelease', { lua: RELEASE });
    redis.defineCommand('platformRoom', { lua: ROOM });
    redis.defineCommand('platformRenew', { lua: RENEW });
    this.commands = redis as unknown as SemaphoreCommands;
  }

  /**
   * ADMIT: a code per candidate, and how long until a hold of a semaphore found full lapses (ms,
   * undefined if none was); `endpointLimits`, each candidate's own endpoint limit.
   */
  async admit(
    candidates: readonly SlotHolder[],
    max: number,
    endpointLimits: number[],
  ): Promise<{ codes: number[]; lapseMs: number | undefined }> {
    const keys = [
      this.globalKey(),
      ...candidates.flatMap((m) => this.keys(m.organizationId, m.endpointId)),
    ];
    const codes = await this.commands.platformAdmit(
      keys.length,
      ...keys,
      this.config.concurrency,
      this.config.organizationConcurrency,
      this.config.endpointConcurrency,
      this.holdMs,
      max,
      ...candidates.map((m) => m.id),
      ...endpointLimits,
    );
    const lapse = codes.pop() ?? -1;
    return { codes, lapseMs: lapse < 0 ? undefined : lapse };
  }

  /**
   * ROOM: the free global slots, how long until a hold of those still full lapses (ms, undefined
   * if none is), and the indexes (from 1) of the organizations and endpoints still full.
   */
  async room(
    organizations: readonly string[],
    endpoints: readonly string[],
  ): Promise<{ free: number; lapseMs: number | undefined; full: number[] }> {
    const keys = [
      this.globalKey(),
      ...organizations.map((id) => this.organizationKey(id)),
      ...endpoints.map((id) => this.endpointKey(id)),
    ];
    const limits = [
      this.config.concurrency,
      ...organizations.map(() => this.config.organizationConcurrency),
      ...endpoints.map(() => this.config.endpointConcurrency),
    ];
    const [free = 0, lapse = -1, ...full] = await this.commands.platformRoom(
      keys.length,
      ...keys,
      ...limits,
    );
    return { free, lapseMs: lapse < 0 ? undefined : lapse, full };
  }

  /** TAKE: a code per message, 1 if this job took it. */
  take(jobId: string, marked: readonly SlotHolder[]): Promise<number[]> {
    const keys = [
      this.globalKey(),
      ...marked.flatMap((m) => this.slotKeys(m.id, m.organizationId, m.endpointId)),
    ];
    return this.commands.platformTake(
      keys.length,
      ...keys,
      jobId,
      this.holdMs,
      this.config.concurrency,
      this.config.organizationConcurrency,
      this.config.endpointConcurrency,
      ...marked.map((m) => m.id),
    );
  }

  /** RELEASE: frees the slots of messages (and their marks, with `marks`) still the job's. */
  async release(
    finished: readonly (SlotHolder & { jobId: string })[],
    marks: boolean,
  ): Promise<void> {
    const keys = [
      this.globalKey(),
      ...finished.flatMap((m) => this.slotKeys(m.id, m.organizationId, m.endpointId)),
    ];
    await this.commands.platformRelease(
      keys.length,
      ...keys,
      marks ? 1 : 0,
      ...finished.flatMap((m) => [m.id, m.jobId]),
    );
  }

  /**
   * RENEW: the holds (and marks of `jobId`, where set) of messages this instance holds; a code
   * per message, 0 for one queued here (no `jobId`) that its queued job (`queuedAs`) has taken.
   */
  renew(holds: readonly (SlotHolder & { jobId?: string; queuedAs?: string })[]): Promise<number[]> {
    const keys = [
      this.globalKey(),
      ...holds.flatMap((m) => this.slotKeys(m.id, m.organizationId, m.endpointId)),
    ];
    return this.commands.platformRenew(
      keys.length,
      ...keys,
      this.holdMs,
      ...holds.flatMap((m) => [m.id, m.jobId ?? '', m.queuedAs ?? '']),
    );
  }

  private globalKey(): string {
    return `${this.prefix}:webhook-global`;
  }

  private organizationKey(id: string): string {
    return `${this.prefix}:webhook-organization:${id}`;
  }

  private endpointKey(id: string): string {
    return `${this.prefix}:webhook-endpoint:${id}`;
  }

  private keys(organizationId: string, endpointId: string): [string, string] {
    return [this.organizationKey(organizationId), this.endpointKey(endpointId)];
  }

  /** A message's organization and endpoint semaphores and its mark, for TAKE and RELEASE. */
  private slotKeys(id: string, organizationId: string, endpointId: string): string[] {
    return [...this.keys(organizationId, endpointId), `${this.prefix}:webhook-taken:${id}`];
  }
}
