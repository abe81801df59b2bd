import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lastBeatOf, lastSignOfLife } from '../../src/common/api/announce-times.js';
import type { MemberClusterAnnounce } from '../../src/common/api/antrea.js';
import { TIMESTAMP_ANNOTATION } from '../../src/common/api/names.js';

const CREATED = '2026-12-03T11:00:00Z';
const CREATED_MS = Date.parse(CREATED);

function announce(touch: string | undefined, created: unknown = CREATED): MemberClusterAnnounce {
  return {
    metadata: {
      name: 'member-announce-east',
      creationTimestamp: created,
      ...(touch === undefined ? {} : { annotations: { [TIMESTAMP_ANNOTATION]: touch } }),
    },
  } as MemberClusterAnnounce;
}

describe('lastBeatOf() and lastSignOfLife()', () => {
  it('take the touch-ts when it is RFC 3339', () => {
    const a = announce('2026-12-03T11:00:10.250Z');
    assert.equal(lastBeatOf(a), CREATED_MS + 10_250);
    assert.equal(lastSignOfLife(a), CREATED_MS + 10_250);
  });

  it('without a readable touch-ts, only lastSignOfLife falls back to the creation, string or Date', () => {
    for (const touch of [undefined, '', 'x', '2026-12-03 11:00:10']) {
      assert.equal(lastBeatOf(announce(touch)), undefined, String(touch));
      assert.equal(lastSignOfLife(announce(touch)), CREATED_MS, String(touch));
      assert.equal(lastSignOfLife(announce(touch, new Date(CREATED_MS))), CREATED_MS, String(touch));
    }
  });

  it('answer undefined when neither parses', () => {
    assert.equal(lastSignOfLife(announce('x', null)), undefined);
    assert.equal(lastSignOfLife(announce(undefined, 'yesterday')), undefined);
  });
});
