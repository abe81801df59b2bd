import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { ANTREA_MEMBER_ROLE_RULES, memberRulesNotGranted, missingMemberPermissions } from '../../src/leader/decisions/member-role.js';
import { createMemberToken, leaderCaPem, MemberTokenError, parseDuration } from '../../src/leader/member-token.js';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

function kubeConfig(cluster: { caData?: string; caFile?: string }): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'leader', server: 'https://127.0.0.1:1', skipTLSVerify: false, ...cluster }],
    users: [{ name: 'admin', token: 'x' }],
    contexts: [{ name: 'leader', cluster: 'leader', user: 'admin' }],
    currentContext: 'leader',
  });
  return kc;
}

describe('parseDuration', () => {
  it('accepts seconds and h/m/s durations', () => {
    assert.equal(parseDuration('3600'), 3600);
    assert.equal(parseDuration('8760h'), 31_536_000);
    assert.equal(parseDuration('90m'), 5400);
    assert.equal(parseDuration('1h30m15s'), 5415);
    assert.equal(parseDuration(' 600s '), 600);
  });
  it('rejects anything else', () => {
    for (const bad of ['', 'h', '1d', '1.5h', '-3', '30m1h', '1 h']) {
      assert.throws(() => parseDuration(bad), MemberTokenError, bad);
    }
  });
});

describe('leaderCaPem', () => {
  it('reads certificate-authority-data and certificate-authority', () => {
    assert.equal(leaderCaPem(kubeConfig({ caData: Buffer.from(PEM).toString('base64') })), PEM);
    assert.throws(() => leaderCaPem(kubeConfig({ caFile: '/nonexistent/ca.crt' })), /cannot read the leader CA file \/nonexistent\/ca\.crt/);
  });
  it('refuses a cluster without a CA, or with something that is not PEM', () => {
    assert.throws(() => leaderCaPem(kubeConfig({})), /neither certificate-authority-data nor certificate-authority/);
    assert.throws(() => leaderCaPem(kubeConfig({ caData: Buffer.from('junk').toString('base64') })), /not a PEM certificate/);
  });
});

describe('member Role rules', () => {
  it("Antrea's rules grant themselves; wildcards count; resourceNames-limited rules do not", () => {
    assert.deepEqual(missingMemberPermissions(ANTREA_MEMBER_ROLE_RULES), []);
    assert.deepEqual(missingMemberPermissions([{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }]), []);
    const limited = [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'], resourceNames: ['x'] }];
    assert.equal(missingMemberPermissions(limited).length, 25);
  });
  it('names what is missing and which rules to append', () => {
    const withoutWatch = ANTREA_MEMBER_ROLE_RULES.map((r) => Object.assign({}, r, { verbs: r.verbs.filter((v) => v !== 'watch') }));
    assert.deepEqual(missingMemberPermissions(withoutWatch), [
      'watch multicluster.crd.antrea.io/memberclusterannounces',
      'watch multicluster.crd.antrea.io/resourceexports',
      'watch multicluster.crd.antrea.io/resourceimports',
    ]);
    assert.deepEqual(memberRulesNotGranted(withoutWatch).map((r) => r.resources), [['memberclusterannounces'], ['resourceexports'], ['resourceimports']]);
    assert.deepEqual(missingMemberPermissions([]).slice(0, 1), ['create core/events']);
  });
});

describe('createMemberToken input checks (before any request)', () => {
  const kc = kubeConfig({ caData: Buffer.from(PEM).toString('base64') });
  for (const [options, message] of [
    [{ memberId: 'East' }, /member cluster ID "East" is not valid: a cluster ID is a DNS-1123 label/],
    [{ memberId: 'east_1' }, /member cluster ID "east_1"/],
    [{ memberId: `a${'b'.repeat(63)}` }, /at most 63 lower-case letters/],
    [{ memberId: 'east.example' }, /member cluster ID "east\.example" is not valid: .*\(no dots\); no token was issued/],
    [{ memberId: 'east', serviceAccount: 'antrea-mc-controller' }, /ServiceAccount name "antrea-mc-controller" is reserved/],
    [{ memberId: 'east', serviceAccount: 'default' }, /ServiceAccount name "default" is reserved/],
    [{ memberId: 'east', namespace: 'a.b' }, /leader namespace "a\.b" is not a DNS-1123 label/],
    [{ memberId: 'east', serviceAccount: '-sa' }, /ServiceAccount name "-sa"/],
    [{ memberId: 'east', secretName: 'A' }, /Secret name "A"/],
    [{ memberId: 'east', memberNamespace: 'x_y' }, /member namespace "x_y"/],
    [{ memberId: 'east', durationSeconds: 599 }, /at least 600 \(10m\); got 599/],
    [{ memberId: 'east', durationSeconds: 600.5 }, /whole number of seconds/],
  ] as const) {
    it(JSON.stringify(options), async () => {
      await assert.rejects(createMemberToken(kc, options), (err: unknown) => err instanceof MemberTokenError && message.test(err.message));
    });
  }
  it('accepts a valid member ID up to the CA check', async () => {
    await assert.rejects(createMemberToken(kubeConfig({}), { memberId: 'east-1' }), /neither certificate-authority-data/);
  });
});
