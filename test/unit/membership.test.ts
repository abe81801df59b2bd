import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { heldBy, sameMembership, type MembershipClaim } from '../../src/clusterset/membership.js';
import type { LeaderTarget } from '../../src/clusterset/spec.js';

const target = (over: Partial<LeaderTarget> = {}): LeaderTarget => ({
  localClusterID: 'east', clusterSetID: 'set', leaderClusterID: 'leader', server: 'https://leader.example:6443', secretName: 's', leaderNamespace: 'mc', ...over,
});
const claim = (name: string, createdAt: string | undefined, over: Partial<LeaderTarget> = {}): MembershipClaim => ({ name, createdAt, target: target({ clusterSetID: name, ...over }) });

describe('sameMembership', () => {
  it('is the same announce: same member ID and namespace on the same leader, by ID or by URL', () => {
    assert.equal(sameMembership(target(), target({ secretName: 'other', clusterSetID: 'x' })), true);
    assert.equal(sameMembership(target(), target({ leaderClusterID: 'renamed' })), true, 'same server URL');
    assert.equal(sameMembership(target(), target({ server: 'https://LEADER.example:6443/' })), true, 'URLs compare normalised');
    assert.equal(sameMembership(target(), target({ server: 'https://other:6443' })), true, 'same leader ID');
    assert.equal(sameMembership(target(), target({ server: 'https://other:6443', leaderClusterID: 'other' })), false);
    assert.equal(sameMembership(target(), target({ localClusterID: 'west' })), false);
    assert.equal(sameMembership(target(), target({ leaderNamespace: 'mc2' })), false);
  });
});

describe('heldBy', () => {
  it('gives the membership to the oldest claim, then by name, whatever the order of the list', () => {
    const a = claim('a', '2026-12-01T00:00:00Z');
    const b = claim('b', '2026-12-02T00:00:00Z');
    const c = claim('c', '2026-12-01T00:00:00Z');
    assert.equal(heldBy(a, [b, c]), undefined);
    assert.equal(heldBy(b, [c, a])?.name, 'a');
    assert.equal(heldBy(c, [b, a])?.name, 'a', 'same age: by name');
  });

  it('ignores itself, claims on other memberships, and sorts a missing timestamp last', () => {
    const a = claim('a', undefined);
    const b = claim('b', '2026-12-02T00:00:00Z');
    const west = claim('w', '2020-01-01T00:00:00Z', { localClusterID: 'west' });
    assert.equal(heldBy(a, [a, b, west])?.name, 'b');
    assert.equal(heldBy(b, [a, b, west]), undefined);
  });
});
