// `join --configure-dns` on real control planes: the member's kube-system/coredns (a kubeadm
// Corefile, a Deployment naming the CoreDNS image; a bare apiserver runs no Pods) is refused
// with nothing written when the Corefile is not a known shape or CoreDNS is too old; otherwise
// patched, then left alone by a second join, served by the real CoreDNS with only kubeadm's and
// join's RBAC, reported by `status`, and restored byte for byte by `leave`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, DiscoveryV1Api, RbacAuthorizationV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { CLUSTERSET } from '../../src/common/api/antrea.js';
import { SERVICE_EXPORT, SERVICE_IMPORT, type ServiceImport } from '../../src/common/api/mcs.js';
import { startAgent, type Agent } from '../../src/agent.js';
import { COREDNS_ACCESS_NAME } from '../../src/cli/dns/configure.js';
import { planCorefilePatch } from '../../src/cli/dns/corefile.js';
import { loadConfig } from '../../src/common/config/config.js';
import { LeaderController } from '../../src/leader/controller.js';
import { MEMBER_ROLE_NAME } from '../../src/leader/decisions/member-role.js';
import { AGENT_NS, ANTREA_MEMBER_ROLE_RULES, capturedLogger, installCrds, LEADER_NS, setupLeader } from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { lookup, startCoreDNS } from '../harness/coredns.js';
import { createNamespace } from '../harness/kube.js';
import { maybe } from '../harness/imports.js';
import { onFailureShowLogs } from '../harness/report.js';
import { runCli } from '../harness/cli.js';
import { waitFor } from '../harness/wait.js';
import { KUBEADM_COREFILE } from '../fixtures/corefiles.js';

const CS = 'prod';
const NS = 'apps';
/** The kubernetes plugin in a server block that never sees clusterset.local queries. */
const UNKNOWN_SHAPE = 'cluster.local:53 {\n    kubernetes cluster.local {\n        pods insecure\n    }\n}\n.:53 {\n    forward . /etc/resolv.conf\n}\n';

describe('join --configure-dns and leave: the member\'s CoreDNS serves clusterset.local', () => {
  let leader: ControlPlane;
  let member: ControlPlane;
  let agent: Agent | undefined;
  let controller: LeaderController | undefined;
  const log = capturedLogger();
  const sides = () => ['--leader-kubeconfig', leader.kubeconfigPath, '--member-kubeconfig', member.kubeconfigPath];
  // The leader is on loopback, which members here do reach: given explicitly (join refuses a loopback URL it only defaulted to).
  const join = () => runCli('join', [...sides(), '--cluster-id', 'east', '--clusterset', CS, '--leader-cluster-id', 'leader', '--leader-server', leader.server, '--wait', '60', '--configure-dns']);
  const configMap = () => member.adminConfig().makeApiClient(CoreV1Api).readNamespacedConfigMap({ namespace: 'kube-system', name: 'coredns' });
  const setImage = async (image: string) => {
    await member.adminConfig().makeApiClient(AppsV1Api).patchNamespacedDeployment({ namespace: 'kube-system', name: 'coredns',
      body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: image }] });
  };
  const setCorefile = async (corefile: string) => {
    const cm = await configMap();
    await member.adminConfig().makeApiClient(CoreV1Api).replaceNamespacedConfigMap({ namespace: 'kube-system', name: 'coredns', body: { metadata: cm.metadata ?? {}, data: { Corefile: corefile } } });
  };
  const identity = (cm: V1ConfigMap) => ({ uid: cm.metadata?.uid, resourceVersion: cm.metadata?.resourceVersion, corefile: cm.data?.['Corefile'] });
  const memberClusterSet = () => maybe(() => member.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
    group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace: AGENT_NS, name: CS }));
  const accessRole = () => maybe(() => member.adminConfig().makeApiClient(RbacAuthorizationV1Api).readClusterRole({ name: COREDNS_ACCESS_NAME }));

  before(async () => {
    [leader, member] = await Promise.all([startControlPlane('jdns-leader'), startControlPlane('jdns-member')]);
    await setupLeader(leader, 'leader');
    // What the chart in mode=leader adds: the shared member Role; and `leader run`, to aggregate exports.
    await leader.adminConfig().makeApiClient(RbacAuthorizationV1Api).createNamespacedRole({ namespace: LEADER_NS, body: { metadata: { name: MEMBER_ROLE_NAME }, rules: [...ANTREA_MEMBER_ROLE_RULES] } });
    controller = new LeaderController({ kubeConfig: leader.adminConfig(), namespace: LEADER_NS, memberTimeoutMs: 30_000, staleMemberMs: 86_400_000, logger: log.logger });
    await controller.start();
    await installCrds(member);
    for (const ns of [AGENT_NS, NS, 'kube-system']) await createNamespace(member.adminConfig(), ns);
    const kc = member.adminConfig();
    // kube-system/coredns as kubeadm installs it (the Deployment's Pods never run here).
    await kc.makeApiClient(CoreV1Api).createNamespacedConfigMap({ namespace: 'kube-system', body: { metadata: { name: 'coredns' }, data: { Corefile: KUBEADM_COREFILE } } });
    const labels = { 'k8s-app': 'kube-dns' };
    await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace: 'kube-system', body: { metadata: { name: 'coredns' }, spec: {
      selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'coredns', image: 'registry.k8s.io/coredns/coredns:v1.11.3' }] } } } } });
    const config = loadConfig({ env: {}, readFile: () => '' });
    agent = await startAgent({ ...config, namespace: AGENT_NS, heartbeat: { ...config.heartbeat, intervalSeconds: 2 } }, log.logger, kc);
  });
  after(async () => {
    await agent?.stop();
    await controller?.stop();
    await Promise.all([leader.stop(), member.stop()]);
  });
  onFailureShowLogs(() => [leader, member], () => `--- agent log ---\n${log.text()}`);

  it('refuses a CoreDNS older than 1.12.2 before writing anything', async () => {
    const before_ = identity(await configMap());
    const res = await join();
    assert.equal(res.code, 4, res.stderr);
    assert.match(res.stderr, /refused, nothing written:\n {2}- --configure-dns: CoreDNS 1\.11\.3 \(registry\.k8s\.io\/coredns\/coredns:v1\.11\.3\) is older than 1\.12\.2/);
    assert.deepEqual(identity(await configMap()), before_);
    assert.equal(await memberClusterSet(), undefined, 'join wrote nothing');
    assert.equal(await accessRole(), undefined);
  });

  it('refuses a Corefile of unknown shape, saying what to add by hand; the ConfigMap unchanged (uid, resourceVersion)', async () => {
    await setImage('registry.k8s.io/coredns/coredns:v1.12.2');
    await setCorefile(UNKNOWN_SHAPE);
    try {
      const before_ = identity(await configMap());
      const res = await join();
      assert.equal(res.code, 4, res.stderr);
      assert.match(res.stderr, /is not a shape join edits \(the kubernetes plugin is in the server block "cluster\.local:53", which does not receive queries for clusterset\.local.*\); nothing was changed\. By hand: .*multicluster clusterset\.local/s);
      assert.deepEqual(identity(await configMap()), before_);
      assert.equal(await memberClusterSet(), undefined);
      assert.equal(await accessRole(), undefined);
    } finally {
      await setCorefile(KUBEADM_COREFILE);
    }
  });

  it('patches kubeadm\'s Corefile and grants ServiceImports; status says served: yes', async () => {
    const statusBefore = await runCli('status', ['--kubeconfig', member.kubeconfigPath]);
    const res = await join();
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /member: created ClusterRole clusterset-agent:coredns-serviceimports/);
    assert.match(res.stderr, /member: ConfigMap kube-system\/coredns: the kubernetes plugin serves clusterset\.local/);
    assert.equal((await configMap()).data?.['Corefile'], (planCorefilePatch(KUBEADM_COREFILE) as { corefile: string }).corefile);
    assert.deepEqual(JSON.parse(JSON.stringify((await accessRole())?.rules)), [{ apiGroups: ['multicluster.x-k8s.io'], resources: ['serviceimports'], verbs: ['list', 'watch'] }]);
    assert.equal(statusBefore.stdout.includes('clusterset.local served'), false, 'no member ClusterSet before the join: nothing said');
    const status = await runCli('status', ['--kubeconfig', member.kubeconfigPath]);
    assert.match(status.stdout, /\nclusterset\.local served: yes \(/, status.stdout);
  });

  it('a second join writes nothing (the ConfigMap\'s resourceVersion unchanged)', async () => {
    const before_ = identity(await configMap());
    const res = await join();
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /nothing written, all in place/);
    assert.deepEqual(identity(await configMap()), before_);
  });

  it('the real CoreDNS with the patched Corefile and only kubeadm\'s and join\'s RBAC answers the member\'s import', async () => {
    const kc = member.adminConfig();
    await kc.makeApiClient(CoreV1Api).createNamespacedService({ namespace: NS, body: { metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80 }] } } });
    await kc.makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({ namespace: NS, body: { metadata: { name: 'web-local', labels: { 'kubernetes.io/service-name': 'web' } },
      addressType: 'IPv4', endpoints: [{ addresses: ['10.7.0.1'], conditions: { ready: true } }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } });
    await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({ group: SERVICE_EXPORT.group, version: SERVICE_EXPORT.version, plural: SERVICE_EXPORT.plural, namespace: NS,
      body: { apiVersion: `${SERVICE_EXPORT.group}/${SERVICE_EXPORT.version}`, kind: SERVICE_EXPORT.kind, metadata: { name: 'web' } } });
    const si = await waitFor('web imported with an IP', async () => {
      const s = await maybe(async () => (await kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({ group: SERVICE_IMPORT.group, version: SERVICE_IMPORT.version, plural: SERVICE_IMPORT.plural, namespace: NS, name: 'web' })) as ServiceImport);
      return (s?.spec?.ips ?? []).length > 0 ? s : undefined;
    }, { timeoutMs: 60_000, intervalMs: 100 });
    const corefile = (await configMap()).data?.['Corefile'] ?? '';
    // Only what running out of cluster needs: loopback ports and the kubeconfig; the rest as join left it.
    const dns = await startCoreDNS(member, { chartAccess: false, corefile: (kubeconfig, ports) => corefile
      .replace('.:53 {', `.:${String(ports.dns)} {\n    bind 127.0.0.1`)
      .replace(/^ {4}health \{\n[^}]*\}\n/m, '')
      .replace('    ready\n', `    ready 127.0.0.1:${String(ports.ready)}\n`)
      .replace('    prometheus :9153\n', '')
      .replace(/^ {4}forward[^}]*\}\n/m, '')
      .replace(/(kubernetes [^{]*\{\n)/, `$1       kubeconfig ${kubeconfig} coredns\n`) });
    try {
      assert.deepEqual(await lookup(() => dns.resolver().resolve4(`web.${NS}.svc.clusterset.local`)), si.spec?.ips, `${dns.corefile}\n${dns.logTail()}`);
    } finally {
      await dns.stop();
    }
  });

  it('leave restores the Corefile byte for byte and removes join\'s RBAC', async () => {
    const res = await runCli('leave', [...sides(), '--clusterset', CS, '--wait', '60']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /removed clusterset\.local \(added by join --configure-dns\)/);
    assert.equal((await configMap()).data?.['Corefile'], KUBEADM_COREFILE);
    assert.equal(await accessRole(), undefined);
    assert.equal(await maybe(() => member.adminConfig().makeApiClient(RbacAuthorizationV1Api).readClusterRoleBinding({ name: COREDNS_ACCESS_NAME })), undefined);
  });
});
