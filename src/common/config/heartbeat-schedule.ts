// When a member writes its heartbeat: the node-cron expression for an interval, and each
// member's stable offset within it. Kept apart from loading the configuration because it is
// a schedule computed from settings, not a setting; the interval's allowed values are declared
// with the setting (HEARTBEAT_INTERVALS in schema.ts) because they are what the schema accepts.

import { validate as validateCron } from 'node-cron';
import { HEARTBEAT_INTERVALS } from './schema.js';

/**
 * The node-cron expression (with a seconds field) that fires every `intervalSeconds`,
 * aligned to the wall clock and shifted by `offsetSeconds` (0 ≤ offset < interval):
 * `*\/10 * * * * *`, `3-59/10 * * * * *`, `0 *\/2 * * * *`, `7 1-59/2 * * * *`, `0 0 * * * *`.
 * Throws RangeError for an interval outside HEARTBEAT_INTERVALS or an offset out of range.
 */
export function heartbeatCron(intervalSeconds: number, offsetSeconds = 0): string {
  if (!HEARTBEAT_INTERVALS.includes(intervalSeconds)) {
    throw new RangeError(`heartbeat interval ${intervalSeconds}s is not one of ${HEARTBEAT_INTERVALS.join(',')}`);
  }
  if (!Number.isInteger(offsetSeconds) || offsetSeconds < 0 || offsetSeconds >= intervalSeconds) {
    throw new RangeError(`heartbeat offset ${offsetSeconds}s must be a whole number of seconds below the interval ${intervalSeconds}s`);
  }
  const second = offsetSeconds % 60;
  const minute = Math.floor(offsetSeconds / 60);
  let expression: string;
  if (intervalSeconds < 60) expression = offsetSeconds === 0 ? `*/${intervalSeconds} * * * * *` : `${offsetSeconds}-59/${intervalSeconds} * * * * *`;
  else if (intervalSeconds < 3600) {
    expression = offsetSeconds === 0 ? `0 */${intervalSeconds / 60} * * * *` : `${second} ${minute}-59/${intervalSeconds / 60} * * * *`;
  } else expression = `${second} ${minute} * * * *`;
  // A guard against this function and node-cron's grammar drifting apart, not against input.
  if (!validateCron(expression)) throw new Error(`node-cron rejected generated expression ${expression}`);
  return expression;
}

/**
 * A member's stable place in the heartbeat interval, from its cluster ID (FNV-1a), so that a
 * fleet of members spreads its writes over the interval instead of all writing to the leader
 * at the same second; the same ID always gets the same offset, across restarts.
 */
export function heartbeatOffsetSeconds(clusterID: string, intervalSeconds: number): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(clusterID, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % intervalSeconds;
}
