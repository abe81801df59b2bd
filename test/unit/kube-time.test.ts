import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { V1MicroTime } from '@kubernetes/client-node';
import { parseTimestamp } from '../../src/common/kube/time.js';

const T = Date.UTC(2026, 11, 3, 11, 0, 0);

describe('parseTimestamp()', () => {
  it('reads whole seconds, as metav1.Time and Antrea write them', () => {
    assert.equal(parseTimestamp('2026-12-03T11:00:00Z'), T);
  });

  it('reads fractional seconds of any length, kept to the millisecond', () => {
    assert.equal(parseTimestamp('2026-12-03T11:00:00.5Z'), T + 500);
    assert.equal(parseTimestamp('2026-12-03T11:00:00.123Z'), T + 123);
    assert.equal(parseTimestamp('2026-12-03T11:00:00.123456Z'), T + 123, 'a MicroTime');
    assert.equal(parseTimestamp('2026-12-03T11:00:00.123456789Z'), T + 123, 'nanoseconds');
  });

  it('applies an offset', () => {
    assert.equal(parseTimestamp('2026-12-03T13:00:00+02:00'), T);
    assert.equal(parseTimestamp('2026-12-03T08:30:00.250-02:30'), T + 250);
  });

  it('takes the Date objects client-node makes, MicroTime included', () => {
    assert.equal(parseTimestamp(new Date(T + 7)), T + 7);
    assert.equal(parseTimestamp(new V1MicroTime(T + 7)), T + 7);
    assert.equal(parseTimestamp(new Date(Number.NaN)), undefined, 'an invalid Date');
  });

  it('answers undefined for absent, empty and garbage values', () => {
    for (const raw of [undefined, null, '', 'x', 'yesterday', ' 2026-12-03T11:00:00Z', '2026-12-03T11:00:00Z ', T, {}, ['2026-12-03T11:00:00Z']]) {
      assert.equal(parseTimestamp(raw), undefined, JSON.stringify(raw));
    }
  });

  it('refuses what Date.parse would guess at: no zone, no time, another format, impossible fields', () => {
    for (const raw of [
      '2026-12-03T11:00:00',
      '2026-12-03',
      '2026-12-03 11:00:00Z',
      'Thu Dec 03 2026 11:00:00 GMT+0000',
      '2026-12-03T11:00Z',
      '2026-12-03T11:00:00.Z',
      '2026-12-03T11:00:00+0200',
      '2026-13-03T11:00:00Z',
      '2026-12-03T11:00:60Z',
    ]) {
      assert.equal(parseTimestamp(raw), undefined, raw);
    }
  });
});
