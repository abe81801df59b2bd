import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse as parseCron, validate as validateCron } from 'node-cron';
import { heartbeatCron, heartbeatOffsetSeconds } from '../../src/common/config/heartbeat-schedule.js';
import { HEARTBEAT_INTERVALS } from '../../src/common/config/schema.js';

describe('heartbeatCron()', () => {
  it('builds seconds-field expressions', () => {
    assert.equal(heartbeatCron(10), '*/10 * * * * *');
    assert.equal(heartbeatCron(1), '*/1 * * * * *');
    assert.equal(heartbeatCron(120), '0 */2 * * * *');
    assert.equal(heartbeatCron(3600), '0 0 * * * *');
  });

  // Spacing between consecutive firings within one period of the field, wrapping around.
  function gaps(values: readonly number[], period: number): Set<number> {
    return new Set(values.map((v, i) => ((values[i + 1] ?? (values[0] ?? 0) + period) - v)));
  }

  it('gives node-cron a valid expression that fires exactly every interval for each allowed value', () => {
    for (const interval of HEARTBEAT_INTERVALS) {
      const expression = heartbeatCron(interval);
      assert.ok(validateCron(expression), expression);
      const fields = parseCron(expression);
      if (interval < 60) {
        assert.deepEqual(gaps(fields.second, 60), new Set([interval]), expression);
        assert.equal(fields.minute.length, 60, expression);
      } else {
        assert.deepEqual(fields.second, [0], expression);
        assert.deepEqual(gaps(fields.minute, 60), new Set([interval / 60]), expression);
        assert.equal(fields.hour.length, 24, expression);
      }
    }
  });

  it('with an offset, still fires exactly every interval, shifted by the offset', () => {
    assert.equal(heartbeatCron(10, 3), '3-59/10 * * * * *');
    assert.equal(heartbeatCron(120, 67), '7 1-59/2 * * * *');
    assert.equal(heartbeatCron(3600, 1234), '34 20 * * * *');
    for (const interval of HEARTBEAT_INTERVALS) {
      const offset = interval - 1;
      const fields = parseCron(heartbeatCron(interval, offset));
      if (interval < 60) {
        assert.deepEqual(gaps(fields.second, 60), new Set([interval]), String(interval));
        assert.equal(fields.second[0], offset);
      } else {
        assert.deepEqual(fields.second, [offset % 60]);
        if (interval < 3600) assert.deepEqual(gaps(fields.minute, 60), new Set([interval / 60]), String(interval));
        assert.equal(fields.minute[0], Math.floor(offset / 60));
      }
    }
    for (const bad of [-1, 10, 2.5]) assert.throws(() => heartbeatCron(10, bad), RangeError, String(bad));
  });

  it('spreads members over the interval by cluster ID, the same offset every time', () => {
    assert.equal(heartbeatOffsetSeconds('east', 10), heartbeatOffsetSeconds('east', 10));
    const offsets = Array.from({ length: 200 }, (_, i) => heartbeatOffsetSeconds(`member-${String(i)}`, 10));
    const perSecond = new Map<number, number>();
    for (const o of offsets) perSecond.set(o, (perSecond.get(o) ?? 0) + 1);
    assert.equal(perSecond.size, 10, 'every second of a 10 s interval is used');
    assert.ok(Math.max(...perSecond.values()) <= 35, `at most 35 of 200 members on one second: ${JSON.stringify([...perSecond])}`);
    for (const o of offsets) assert.ok(o >= 0 && o < 10);
  });

  it('refuses intervals that would fire unevenly', () => {
    // The reason for the allow-list: `*/7` is valid cron but fires at :56 and again at :00.
    assert.ok(gaps(parseCron('*/7 * * * * *').second, 60).size > 1);
    for (const bad of [7, 0, 45, 90, 7200, 2.5]) assert.throws(() => heartbeatCron(bad), RangeError, String(bad));
  });
});
