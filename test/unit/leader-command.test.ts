import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runLeaderCommand } from '../../src/cli/leader-command.js';

function captureIO() {
  let stdout = '';
  let stderr = '';
  return {
    io: { stdout: { write: (t: string) => { stdout += t; } }, stderr: { write: (t: string) => { stderr += t; } } },
    out: () => stdout,
    err: () => stderr,
  };
}

describe('runLeaderCommand', () => {
  it('prints usage: --help on stdout (exit 0), nothing or an unknown command on stderr (exit 2)', async () => {
    const help = captureIO();
    assert.equal(await runLeaderCommand(['create-member-token', '--help'], help.io), 0);
    assert.match(help.out(), /^Usage: clusterset-agent leader create-member-token --member-id ID/);
    const none = captureIO();
    assert.equal(await runLeaderCommand([], none.io), 2);
    assert.equal(none.out(), '');
    assert.match(none.err(), /Usage:/);
    const unknown = captureIO();
    assert.equal(await runLeaderCommand(['delete-member'], unknown.io), 2);
    assert.match(unknown.err(), /unknown command 'delete-member'\n\(see 'clusterset-agent leader --help'\)/);
  });
  it('bad flags exit 2 with nothing on stdout', async () => {
    for (const argv of [['create-member-token'], ['create-member-token', '--member-id', 'e', '--bogus'], ['create-member-token', '--member-id', 'e', 'extra']]) {
      const c = captureIO();
      assert.equal(await runLeaderCommand(argv, c.io), 2, argv.join(' '));
      assert.equal(c.out(), '');
    }
  });
  it('invalid values exit 1 with one error line and nothing on stdout', async () => {
    const c = captureIO();
    assert.equal(await runLeaderCommand(['create-member-token', '--member-id', 'e', '--duration', '1d', '--kubeconfig', '/dev/null'], c.io), 1);
    assert.equal(c.out(), '');
    assert.match(c.err(), /^error: duration "1d" is not a number of seconds/);
    const kubeconfig = captureIO();
    assert.equal(await runLeaderCommand(['create-member-token', '--member-id', 'e', '--kubeconfig', '/nonexistent/kubeconfig'], kubeconfig.io), 1);
    assert.equal(kubeconfig.out(), '');
    assert.match(kubeconfig.err(), /^error: cannot load kubeconfig \/nonexistent\/kubeconfig: ENOENT/);
  });
  it('--context picks the kubeconfig context, as status, join and leave do (issue 33, item 6)', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'csa-leader-cmd-')), 'kubeconfig');
    // Two contexts; the current one points at a port that answers nothing, the other at another.
    writeFileSync(file, [
      'apiVersion: v1', 'kind: Config', 'current-context: a',
      'clusters:', '- name: a', '  cluster: { server: "https://127.0.0.1:1" }', '- name: b', '  cluster: { server: "https://127.0.0.1:2" }',
      'users:', '- name: u', '  user: { token: x }',
      'contexts:', '- name: a', '  context: { cluster: a, user: u }', '- name: b', '  context: { cluster: b, user: u }', '',
    ].join('\n'));
    const other = captureIO();
    assert.equal(await runLeaderCommand(['create-member-token', '--member-id', 'east', '--kubeconfig', file, '--context', 'b'], other.io), 1);
    assert.equal(other.out(), '');
    // The chosen context's cluster is the one it works with (neither has a CA: it says which).
    assert.match(other.err(), /cluster "b"/);
    assert.doesNotMatch(other.err(), /cluster "a"/);
    const missing = captureIO();
    assert.equal(await runLeaderCommand(['create-member-token', '--member-id', 'east', '--kubeconfig', file, '--context', 'nope'], missing.io), 1);
    assert.match(missing.err(), /^error: kubeconfig .* has no context nope \(contexts: a, b\)/);
  });
});
