import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { memberKubeConfig } from '../../src/common/kube/local-cluster.js';
import { ConfigError, loadConfig } from '../../src/common/config/config.js';
import { assertMemberCredentials, inClusterFiles, memberCredentialProblems, SERVICEACCOUNT_DIR } from '../../src/common/kube/member-credentials.js';
import { parseConfigFlags } from '../../src/cli/config-flags.js';

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'csa-member-cred-'));
const KUBECONFIG = `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: 'https://127.0.0.1:6443' } }]
users: [{ name: u, user: { token: abc } }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
current-context: x
`;

/** A fake ServiceAccount mount under a temp prefix, as client-node's loadFromCluster(prefix) reads it. */
function serviceAccount(files: { token?: string; ca?: string }): string {
  const prefix = tmp();
  const dir = `${prefix}${SERVICEACCOUNT_DIR}`;
  mkdirSync(dir, { recursive: true });
  if (files.token !== undefined) writeFileSync(path.join(dir, 'token'), files.token);
  if (files.ca !== undefined) writeFileSync(path.join(dir, 'ca.crt'), files.ca);
  return prefix;
}

describe('member credentials', () => {
  it('names client-node\'s in-cluster files', () => {
    assert.deepEqual(inClusterFiles(), {
      token: '/var/run/secrets/kubernetes.io/serviceaccount/token',
      ca: '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt',
    });
  });

  it('in-cluster: a missing token and CA are named, with what to do', () => {
    const files = inClusterFiles(serviceAccount({}));
    const problems = memberCredentialProblems(undefined, files);
    assert.equal(problems.length, 2);
    assert.match(problems[0] ?? '', new RegExp(`^in-cluster ServiceAccount token ${files.token} does not exist: mount the ServiceAccount token \\(automountServiceAccountToken\\) or pass --kubeconfig$`));
    assert.match(problems[1] ?? '', new RegExp(`^in-cluster ServiceAccount CA ${files.ca} does not exist: `));
  });

  it('in-cluster: an empty (or blank) token is refused, a missing root dir too', () => {
    const files = inClusterFiles(serviceAccount({ token: ' \n', ca: 'pem' }));
    assert.deepEqual(memberCredentialProblems(undefined, files).map((p) => p.split(':')[0]), [`in-cluster ServiceAccount token ${files.token} is empty`]);
    const none = inClusterFiles(path.join(tmp(), 'nowhere'));
    assert.equal(memberCredentialProblems(undefined, none).length, 2);
  });

  it('in-cluster: a token and a CA are fine', () => {
    assert.deepEqual(memberCredentialProblems(undefined, inClusterFiles(serviceAccount({ token: 'tok', ca: 'pem' }))), []);
  });

  it('kubeconfig: missing, empty or a directory is refused; a real one is fine', () => {
    const dir = tmp();
    const missing = path.join(dir, 'missing');
    assert.match(memberCredentialProblems(missing)[0] ?? '', new RegExp(`^kubeconfig ${missing} does not exist: pass an existing kubeconfig with --kubeconfig`));
    const empty = path.join(dir, 'empty');
    writeFileSync(empty, '');
    assert.match(memberCredentialProblems(empty)[0] ?? '', new RegExp(`^kubeconfig ${empty} is empty: `));
    assert.match(memberCredentialProblems(dir)[0] ?? '', /cannot be read \(EISDIR\)/);
    const fine = path.join(dir, 'config');
    writeFileSync(fine, KUBECONFIG);
    // A kubeconfig is checked on its own: no in-cluster files needed.
    assert.deepEqual(memberCredentialProblems(fine, inClusterFiles(path.join(dir, 'nowhere'))), []);
  });

  it('assertMemberCredentials throws a ConfigError listing the problems', () => {
    assert.throws(() => { assertMemberCredentials(undefined, inClusterFiles(serviceAccount({ ca: 'pem' }))); },
      (err: unknown) => err instanceof ConfigError && err.problems.length === 1 && /invalid configuration \(1 problem\)/.test(err.message));
  });

  it('memberKubeConfig() fails before loading, and loads the ServiceAccount when it is there', () => {
    const config = loadConfig({ flags: parseConfigFlags(['--namespace', 'agents']), env: {} });
    assert.equal(config.kubeconfig, undefined);
    assert.throws(() => memberKubeConfig(config, serviceAccount({ token: '', ca: 'pem' })), ConfigError);
    const prefix = serviceAccount({ token: 'tok', ca: 'pem' });
    const kc = memberKubeConfig(config, prefix);
    assert.equal(kc.getCurrentCluster()?.caFile, `${prefix}${SERVICEACCOUNT_DIR}/ca.crt`);
  });
});
