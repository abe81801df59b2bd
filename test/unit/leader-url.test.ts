import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultedLeaderServerProblem, isLoopbackHost } from '../../src/cli/join/leader-url.js';

describe('isLoopbackHost()', () => {
  it('is true for loopback and unspecified addresses and localhost names, false for anything else', () => {
    for (const host of ['localhost', 'LOCALHOST', 'api.localhost', '127.0.0.1', '127.1.2.3', '0.0.0.0', '[::1]', '::1', '0:0:0:0:0:0:0:1', '[::]', '::ffff:127.0.0.1']) {
      assert.equal(isLoopbackHost(host), true, host);
    }
    for (const host of ['172.18.0.2', '10.0.0.1', '128.0.0.1', 'host.docker.internal', 'leader.example.com', 'localhost.example.com', '[fd00::1]', '::2', '2001:db8::1']) {
      assert.equal(isLoopbackHost(host), false, host);
    }
  });
});

describe('defaultedLeaderServerProblem()', () => {
  it("refuses a loopback kubeconfig server, naming how to find the members' URL", () => {
    const problem = defaultedLeaderServerProblem('https://127.0.0.1:41234', 'kind-leader');
    assert.match(problem ?? '', /^the leader kubeconfig's server https:\/\/127\.0\.0\.1:41234 is a loopback address/);
    assert.match(problem ?? '', /Pass --leader-server/);
    assert.match(problem ?? '', /docker inspect .*<leader cluster>-control-plane/);
    assert.match(problem ?? '', /kubectl --context kind-leader get endpoints kubernetes/);
    assert.ok(defaultedLeaderServerProblem('https://localhost:6443', 'l') !== undefined);
    assert.ok(defaultedLeaderServerProblem('https://[::1]:6443', 'l') !== undefined);
  });
  it('accepts what may be reachable from a member, and leaves a malformed URL to the spec check', () => {
    for (const url of ['https://172.18.0.2:6443', 'https://leader.example.com', 'https://host.docker.internal:6443', 'not a url']) {
      assert.equal(defaultedLeaderServerProblem(url, 'l'), undefined, url);
    }
  });
});
