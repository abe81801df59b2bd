// The chart's leader-side ResourceExport admission policy (templates/leader-admission.yaml),
// installed on a test leader the way an operator would: `helm template` in mode=leader,
// applied with kubectl, plus the ConfigMap that maps member ServiceAccounts to cluster IDs.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { RESOURCE_EXPORT } from '../../src/common/api/antrea.js';
import { apiStatus, httpStatus } from '../../src/common/kube/errors.js';
import { k8sBins, repoRoot } from './bins.js';
import { LEADER_NS } from './clusterset.js';
import type { ControlPlane } from './control-plane.js';
import { createNamespace, issueToken, kubectlApply, tokenConfig } from './kube.js';
import { clusterInfoExportOf } from './resource-export.js';
import { waitFor } from './wait.js';

const execFileAsync = promisify(execFile);

/** Where `installChartLeader` installs the chart, and its leader's ServiceAccount there. */
export const CHART_LEADER_NS = 'csa-leader';
export const CHART_LEADER_SA = 'csa-leader-clusterset-agent';

/**
 * The chart in mode=leader on `cp` (RBAC and the three admission policies, as an operator
 * installs it; `setupLeader` done before), and a kubeconfig file in `dir` with the chart's own
 * leader ServiceAccount token, as `leader run` runs in its Pod: its writes are the ones the
 * policies exempt. Returns the file's path.
 */
export async function installChartLeader(cp: ControlPlane, dir: string, helmArgs: readonly string[] = []): Promise<string> {
  const admin = cp.adminConfig();
  await createNamespace(admin, CHART_LEADER_NS);
  await kubectlApply(cp, await helmTemplate(['csa-leader', CHART, '--namespace', CHART_LEADER_NS, '--set', 'mode=leader', '--set', 'leader.createNamespace=false', ...helmArgs]));
  const token = await issueToken(admin, CHART_LEADER_NS, CHART_LEADER_SA, 86_400);
  const file = path.join(dir, 'leader.kubeconfig');
  writeFileSync(file, `apiVersion: v1
kind: Config
clusters: [{ name: l, cluster: { server: "${cp.server}", certificate-authority: "${cp.caFile}" } }]
users: [{ name: u, user: { token: "${token}" } }]
contexts: [{ name: c, context: { cluster: l, user: u } }]
current-context: c
`);
  return file;
}

export const CHART = path.join(repoRoot, 'charts', 'clusterset-agent');
export const MEMBER_IDS_CONFIGMAP = 'clusterset-member-ids';

/** `helm template` with a throwaway helm home, so nothing is read from or left in the user's. */
export async function helmTemplate(args: readonly string[]): Promise<string> {
  const home = mkdtempSync(path.join(os.tmpdir(), 'csa-helm-'));
  try {
    const { stdout } = await execFileAsync(k8sBins().helm, ['template', ...args], {
      encoding: 'utf8', timeout: 120_000,
      env: { ...process.env, HELM_CACHE_HOME: path.join(home, 'cache'), HELM_CONFIG_HOME: path.join(home, 'config'), HELM_DATA_HOME: path.join(home, 'data') },
    });
    return stdout;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/**
 * Applies the policy and its binding, writes the ServiceAccount → cluster ID map, and waits
 * until the policy is in force: a dry-run export by `probe` (a member token) in another
 * cluster's name is denied.
 */
export async function installLeaderAdmission(leader: ControlPlane, members: Readonly<Record<string, string>>, probe: { token: string; clusterID: string }): Promise<void> {
  const rendered = await helmTemplate(['csa-leader', CHART, '--namespace', 'csa-leader', '--set', 'mode=leader', '--show-only', 'templates/leader-admission.yaml']);
  await kubectlApply(leader, rendered);
  await leader.adminConfig().makeApiClient(CoreV1Api).createNamespacedConfigMap({
    namespace: LEADER_NS, body: { metadata: { name: MEMBER_IDS_CONFIGMAP }, data: { ...members } },
  });
  await waitForAdmissionInForce(tokenConfig(leader, probe.token).makeApiClient(CustomObjectsApi), probe.clusterID);
}

/**
 * Waits until the leader's policy is in force (policies take effect asynchronously): a dry-run
 * ClusterInfo export by `api`, member `clusterID`'s client, in another cluster's name is
 * denied by a ValidatingAdmissionPolicy.
 */
export async function waitForAdmissionInForce(api: CustomObjectsApi, clusterID: string): Promise<void> {
  const body = clusterInfoExportOf(`${clusterID}-not`, {});
  await waitFor('the admission policy to be in force', async () => {
    try {
      await api.createNamespacedCustomObject({ group: RESOURCE_EXPORT.group, version: RESOURCE_EXPORT.version, plural: RESOURCE_EXPORT.plural, namespace: LEADER_NS, body, dryRun: 'All' });
      return false;
    } catch (err) {
      return httpStatus(err) === 403 && /ValidatingAdmissionPolicy/.test(apiStatus(err)?.message ?? '');
    }
  }, { timeoutMs: 30_000, intervalMs: 200 });
}
