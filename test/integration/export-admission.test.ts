// The chart's leader-side ResourceExport admission (templates/leader-admission.yaml), on a real
// kube-apiserver: rendered with `helm template` in mode=leader, applied with kubectl, and
// exercised with members' own tokens (Antrea's member Role). Exports shaped exactly like
// Antrea's member writes them (spec §2.10) are admitted; each way of writing in another
// cluster's name, or of breaking the leader's bookkeeping, is denied with a message naming the
// rule (Antrea ≥ 2.7's ResourceExport webhook rules, spec §3.6).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AdmissionregistrationV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { RESOURCE_EXPORT, type ResourceExport } from '../../src/common/api/antrea.js';
import {
  RE_LABEL_SOURCE_CLUSTER_ID,
  RE_LABEL_SOURCE_KIND,
  RE_LABEL_SOURCE_NAME,
  RESOURCE_EXPORT_FINALIZER,
} from '../../src/common/api/names.js';
import { apiStatus, httpStatus } from '../../src/common/kube/errors.js';
import { ANTREA_MEMBER_ROLE_RULES, createMemberAccess, LEADER_NS, setupLeader } from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { createServiceAccountWithRole, issueToken, kubectl, tokenConfig, waitForAccess } from '../harness/kube.js';
import { CHART, helmTemplate, MEMBER_IDS_CONFIGMAP as PARAM_CONFIGMAP, waitForAdmissionInForce } from '../harness/leader-admission.js';
import { onFailureShowLogs } from '../harness/report.js';
import { clusterInfoExportOf, labelIdentityExport as harnessLabelIdentityExport, serviceExports } from '../harness/resource-export.js';
import { waitFor } from '../harness/wait.js';


const POLICY_NAME = `clusterset-agent-resourceexports-${LEADER_NS}`;
const EAST = 'east';
const WEST = 'west';

interface ResourceExportBody {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; finalizers?: string[]; resourceVersion?: string };
  spec: Record<string, unknown>;
}

const reRef = { group: RESOURCE_EXPORT.group, version: RESOURCE_EXPORT.version, plural: RESOURCE_EXPORT.plural, namespace: LEADER_NS };

/** A test's own copy of a built export, typed for the field-by-field changes the denials need. */
function body(re: ResourceExport): ResourceExportBody {
  const { apiVersion, kind, metadata, spec } = re;
  if (apiVersion === undefined || kind === undefined || metadata?.name === undefined || spec === undefined) throw new Error('a built ResourceExport has apiVersion, kind, a name and a spec');
  return { apiVersion, kind, metadata: { ...metadata, name: metadata.name }, spec: { ...spec } };
}

/** A Service or Endpoints export exactly as a member writes it (spec §2.10; the Endpoints one in ClusterIP mode). */
function serviceExport(clusterID: string, kind: 'Service' | 'Endpoints', namespace = 'default', name = 'nginx'): ResourceExportBody {
  const pair = serviceExports(clusterID, namespace, name);
  return body(kind === 'Service' ? pair.service : pair.endpoints);
}

/** The ClusterInfo export of a member's Gateway (spec §2.10). */
function clusterInfoExport(clusterID: string): ResourceExportBody {
  return body(clusterInfoExportOf(clusterID, { serviceCIDR: '10.96.0.0/12', podCIDRs: ['10.244.0.0/16'], gatewayIP: '172.18.0.2' }));
}

/** A LabelIdentity export: no finalizer, named after the label's SHA-1. */
function labelIdentityExport(clusterID: string, normalizedLabel: string): ResourceExportBody {
  return body(harnessLabelIdentityExport(clusterID, normalizedLabel));
}

function customObjects(cp: ControlPlane, token: string): CustomObjectsApi {
  return tokenConfig(cp, token).makeApiClient(CustomObjectsApi);
}

/** Asserts that `request` is refused by the policy (403 from a ValidatingAdmissionPolicy) with a message matching `message`. */
async function assertDenied(request: Promise<unknown>, message: RegExp): Promise<void> {
  await assert.rejects(request, (err: unknown) => {
    const status = apiStatus(err);
    assert.equal(httpStatus(err), 403, `expected 403, got ${String(httpStatus(err))}: ${status?.message ?? String(err)}`);
    assert.match(status?.message ?? '', new RegExp(`ValidatingAdmissionPolicy '${POLICY_NAME}'`));
    assert.match(status?.message ?? '', message);
    return true;
  });
}

describe('leader ResourceExport admission policy (chart, mode=leader)', () => {
  let leader: ControlPlane | undefined;
  let admin: KubeConfig;
  let east: CustomObjectsApi;
  let west: CustomObjectsApi;
  let rogue: CustomObjectsApi;
  let asAdmin: CustomObjectsApi;

  const cp = (): ControlPlane => {
    assert.ok(leader, 'leader control plane started');
    return leader;
  };
  const create = (api: CustomObjectsApi, body: ResourceExportBody, dryRun = false) =>
    api.createNamespacedCustomObject({ ...reRef, body, ...(dryRun ? { dryRun: 'All' } : {}) });
  const read = async (name: string) => (await asAdmin.getNamespacedCustomObject({ ...reRef, name })) as ResourceExportBody;
  const replace = (api: CustomObjectsApi, body: ResourceExportBody) =>
    api.replaceNamespacedCustomObject({ ...reRef, name: body.metadata.name, body });
  const writeParams = async (data: Record<string, string>) => {
    const core = admin.makeApiClient(CoreV1Api);
    try {
      await core.replaceNamespacedConfigMap({ namespace: LEADER_NS, name: PARAM_CONFIGMAP, body: { metadata: { name: PARAM_CONFIGMAP }, data } });
    } catch (err) {
      if (httpStatus(err) !== 404) throw err;
      await core.createNamespacedConfigMap({ namespace: LEADER_NS, body: { metadata: { name: PARAM_CONFIGMAP }, data } });
    }
  };

  before(async () => {
    leader = await startControlPlane('export-admission');
    await setupLeader(leader);
    admin = leader.adminConfig();
    asAdmin = admin.makeApiClient(CustomObjectsApi);
    const [eastAccess, westAccess, rogueAccess] = await Promise.all([
      createMemberAccess(leader, EAST), createMemberAccess(leader, WEST), createMemberAccess(leader, 'rogue'),
    ]);
    east = customObjects(leader, eastAccess.token);
    west = customObjects(leader, westAccess.token);
    rogue = customObjects(leader, rogueAccess.token);
  });
  after(async () => {
    await leader?.stop();
  });
  onFailureShowLogs(() => [leader]);

  it('renders the policy and its binding in mode=leader only, and they become active once applied', async () => {
    // Antrea's leader controller runs here (leader.controller.enabled=false): its antrea-mc-controller is exempt.
    const rendered = await helmTemplate(['csa-leader', CHART, '--namespace', 'csa-leader', '--set', 'mode=leader', '--set', 'leader.controller.enabled=false', '--show-only', 'templates/leader-admission.yaml']);
    assert.match(rendered, /'system:serviceaccount:antrea-multicluster:antrea-mc-controller'/);
    // With this project's leader running, no member-side name is exempt by default.
    const ours = await helmTemplate(['csa-leader', CHART, '--namespace', 'csa-leader', '--set', 'mode=leader', '--show-only', 'templates/leader-admission.yaml']);
    assert.doesNotMatch(ours, /antrea-mc-controller/);
    const docs = parseAllDocuments(rendered).map((d) => d.toJS() as { kind: string; metadata: { name: string } } | null).filter((d) => d !== null);
    assert.deepEqual(docs.map((d) => `${d.kind}/${d.metadata.name}`), [`ValidatingAdmissionPolicy/${POLICY_NAME}`, `ValidatingAdmissionPolicyBinding/${POLICY_NAME}`]);
    const memberMode = await helmTemplate(['csa', CHART, '--namespace', 'clusterset-agent']);
    assert.doesNotMatch(memberMode, /ValidatingAdmissionPolicy/, 'mode=member renders no admission policy');

    const dir = mkdtempSync(path.join(os.tmpdir(), 'csa-admission-'));
    try {
      writeFileSync(path.join(dir, 'policy.yaml'), rendered);
      await kubectl(cp(), ['apply', '-f', path.join(dir, 'policy.yaml')]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // east and west are mapped; member-rogue (annotated and bound like the others) is not.
    await writeParams({ [`member-${EAST}`]: EAST, [`member-${WEST}`]: WEST });

    await waitForAdmissionInForce(east, EAST);
    // (status.typeChecking is written by kube-controller-manager, which the harness does not
    // run; the admitted cases below show that every expression evaluates without error.)
    const binding = await admin.makeApiClient(AdmissionregistrationV1Api).readValidatingAdmissionPolicyBinding({ name: POLICY_NAME });
    const paramRef = binding.spec?.paramRef;
    assert.deepEqual([paramRef?.name, paramRef?.namespace, paramRef?.parameterNotFoundAction], [PARAM_CONFIGMAP, LEADER_NS, 'Deny']);
  });

  it('admits a Service, an Endpoints, a ClusterInfo and a LabelIdentity export shaped like Antrea\'s', async () => {
    await create(east, serviceExport(EAST, 'Service'));
    await create(east, serviceExport(EAST, 'Endpoints'));
    await create(east, clusterInfoExport(EAST));
    await create(east, labelIdentityExport(EAST, 'ns:kubernetes.io/metadata.name=default&pod:app=nginx'));
    await create(west, serviceExport(WEST, 'Service'));
    assert.deepEqual((await read(`${EAST}-default-nginx-service`)).metadata.finalizers, [RESOURCE_EXPORT_FINALIZER]);
  });

  it('admits the owner\'s updates (new ports, new endpoints) and deletes', async () => {
    const svc = await read(`${EAST}-default-nginx-service`);
    svc.spec['service'] = { serviceSpec: { ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] } };
    await replace(east, svc);
    const eps = await read(`${EAST}-default-nginx-endpoints`);
    eps.spec['endpoints'] = { subsets: [{ addresses: [{ ip: '10.96.0.11' }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }] };
    await replace(east, eps);
    const li = labelIdentityExport(EAST, 'ns:kubernetes.io/metadata.name=default&pod:app=nginx');
    await east.deleteNamespacedCustomObject({ ...reRef, name: li.metadata.name });
  });

  it('denies spec.clusterID and label sourceClusterID other than the caller\'s', async () => {
    const wrongID = serviceExport(EAST, 'Service', 'default', 'web');
    wrongID.spec['clusterID'] = WEST;
    await assertDenied(create(east, wrongID), /spec\.clusterID "west" is not the cluster ID of ServiceAccount member-east \("east"\)/);
    const wrongLabel = serviceExport(EAST, 'Endpoints', 'default', 'web');
    (wrongLabel.metadata.labels ?? {})[RE_LABEL_SOURCE_CLUSTER_ID] = WEST;
    await assertDenied(create(east, wrongLabel), /label sourceClusterID "west" is not the cluster ID of ServiceAccount member-east/);
    // Everything in west's name, consistently: still not east's to write.
    await assertDenied(create(east, serviceExport(WEST, 'Service', 'default', 'web')), /spec\.clusterID "west" is not the cluster ID/);
  });

  it('denies a name other than Antrea\'s derived one', async () => {
    const wrongName = serviceExport(EAST, 'Service', 'default', 'web');
    wrongName.metadata.name = `${EAST}-default-web-svc`;
    await assertDenied(create(east, wrongName), /metadata\.name "east-default-web-svc" must be "east-default-web-service"/);
    const wrongLabelIdentity = labelIdentityExport(EAST, 'ns:x=y&pod:');
    wrongLabelIdentity.metadata.name = `${EAST}-not-a-hash`;
    await assertDenied(create(east, wrongLabelIdentity), /metadata\.name "east-not-a-hash" must be "east-<16 hex digits of sha1\(label\)>"/);
  });

  it('denies creating a non-LabelIdentity export without the finalizer', async () => {
    const noFinalizer = serviceExport(EAST, 'Service', 'default', 'web');
    delete noFinalizer.metadata.finalizers;
    await assertDenied(create(east, noFinalizer), /a Service export must be created with the finalizer resourceexport\.antrea\.io\/finalizer/);
  });

  it('denies removing the finalizer and changing spec.name or spec.clusterID on update', async () => {
    const removed = await read(`${EAST}-default-nginx-service`);
    removed.metadata.finalizers = [];
    await assertDenied(replace(east, removed), /the finalizer resourceexport\.antrea\.io\/finalizer may not be removed from ResourceExport east-default-nginx-service/);
    const renamed = await read(`${EAST}-default-nginx-service`);
    renamed.spec['name'] = 'web';
    await assertDenied(replace(east, renamed), /spec\.kind, spec\.namespace and spec\.name are immutable \(Service default\/nginx -> Service default\/web\)/);
    const moved = await read(`${EAST}-default-nginx-endpoints`);
    moved.spec['clusterID'] = WEST;
    await assertDenied(replace(east, moved), /spec\.clusterID is immutable \("east" -> "west"\)/);
    // A patch is an UPDATE too.
    await assertDenied(east.patchNamespacedCustomObject({ ...reRef, name: `${EAST}-clusterinfo`, body: [{ op: 'remove', path: '/metadata/finalizers' }] }),
      /may not be removed/);
  });

  it('denies kinds other than Service, Endpoints, ClusterInfo and LabelIdentity, and missing payloads', async () => {
    const acnp: ResourceExportBody = {
      apiVersion: RESOURCE_EXPORT.apiVersion, kind: RESOURCE_EXPORT.kind,
      metadata: { name: `${EAST}-acnp`, labels: { [RE_LABEL_SOURCE_KIND]: 'AntreaClusterNetworkPolicy', [RE_LABEL_SOURCE_CLUSTER_ID]: EAST }, finalizers: [RESOURCE_EXPORT_FINALIZER] },
      spec: { clusterID: EAST, kind: 'AntreaClusterNetworkPolicy', name: 'acnp', namespace: '' },
    };
    await assertDenied(create(east, acnp), /spec\.kind "AntreaClusterNetworkPolicy" is not allowed: must be Service, Endpoints, ClusterInfo or LabelIdentity/);
    const noService = serviceExport(EAST, 'Service', 'default', 'web');
    delete noService.spec['service'];
    await assertDenied(create(east, noService), /a Service export must carry spec\.service/);
    const noEndpoints = serviceExport(EAST, 'Endpoints', 'default', 'web');
    delete noEndpoints.spec['endpoints'];
    await assertDenied(create(east, noEndpoints), /an Endpoints export must carry spec\.endpoints/);
  });

  it('denies source labels that disagree with the spec, and names that are not DNS-1123 labels', async () => {
    const wrongSource = serviceExport(EAST, 'Service', 'default', 'web');
    (wrongSource.metadata.labels ?? {})[RE_LABEL_SOURCE_NAME] = 'nginx';
    await assertDenied(create(east, wrongSource), /labels sourceNamespace\/sourceName "default\/nginx" must equal spec\.namespace\/spec\.name "default\/web"/);
    const wrongKind = serviceExport(EAST, 'Service', 'default', 'web');
    (wrongKind.metadata.labels ?? {})[RE_LABEL_SOURCE_KIND] = 'Endpoints';
    await assertDenied(create(east, wrongKind), /label sourceKind "Endpoints" must equal spec\.kind "Service"/);
    const badName = serviceExport(EAST, 'Service', 'default', 'web');
    badName.spec['name'] = 'Web_1';
    (badName.metadata.labels ?? {})[RE_LABEL_SOURCE_NAME] = 'Web_1';
    await assertDenied(create(east, badName), /spec\.namespace "default" and spec\.name "Web_1" must be DNS-1123 labels/);
  });

  it('denies a ClusterInfo export for another cluster', async () => {
    const otherInfo = clusterInfoExport(EAST);
    otherInfo.metadata.name = `${EAST}-clusterinfo-2`;
    await assertDenied(create(east, otherInfo), /metadata\.name "east-clusterinfo-2" must be "east-clusterinfo"/);
    const forWest = clusterInfoExport(EAST);
    forWest.metadata.name = 'east-clusterinfo';
    (forWest.spec['clusterInfo'] as Record<string, unknown>)['clusterID'] = WEST;
    // Dry run: east's own ClusterInfo export exists, and the policy must answer before the conflict would.
    await assertDenied(create(east, forWest, true), /spec\.clusterInfo\.clusterID "west" is not the cluster ID of ServiceAccount member-east/);
    await assertDenied(create(east, clusterInfoExport(WEST), true), /spec\.clusterID "west" is not the cluster ID/);
  });

  it('denies exports beyond the size bounds (leader.admissionPolicy.limits), naming the bound; admits them at the bound', async () => {
    // Dry runs: the policy answers, nothing is stored.
    const info = (podCIDRs: number, gateways: number) => {
      const body = clusterInfoExport(EAST);
      body.metadata.name = 'east-clusterinfo';
      body.spec['clusterInfo'] = { clusterID: EAST, podCIDRs: Array.from({ length: podCIDRs }, (_, i) => `100.64.${String(Math.floor(i / 256))}.${String(i % 256)}/32`),
        gatewayInfos: Array.from({ length: gateways }, (_, i) => ({ gatewayIP: `172.18.0.${String(i + 2)}` })) };
      return body;
    };
    const replaceDry = async (body: ResourceExportBody) => {
      const current = await read(body.metadata.name);
      return (east.replaceNamespacedCustomObject({ ...reRef, name: body.metadata.name, body: { ...body, metadata: { ...body.metadata, resourceVersion: current.metadata.resourceVersion } }, dryRun: 'All' })) as Promise<unknown>;
    };
    await replaceDry(info(256, 64));
    await assertDenied(replaceDry(info(60_000, 1)), /spec\.clusterInfo\.podCIDRs has 60000 entries; at most 256 are admitted \(leader\.admissionPolicy\.limits\.podCIDRsPerClusterInfo\)/);
    await assertDenied(replaceDry(info(1, 65)), /spec\.clusterInfo\.gatewayInfos has 65 entries; at most 64 are admitted/);
    const service = (ports: number) => {
      const body = serviceExport(EAST, 'Service', 'default', 'wide');
      body.spec['service'] = { serviceSpec: { ports: Array.from({ length: ports }, (_, p) => ({ name: `p${String(p)}`, port: 1024 + p, protocol: 'TCP' })) } };
      return body;
    };
    await create(east, service(1000), true);
    await assertDenied(create(east, service(30_000), true), /spec\.service\.serviceSpec\.ports has 30000 ports; at most 1000 are admitted \(leader\.admissionPolicy\.limits\.portsPerService\)/);
    const endpoints = (ready: number, notReady: number) => {
      const body = serviceExport(EAST, 'Endpoints', 'default', 'wide');
      const ips = (n: number, base: number) => Array.from({ length: n }, (_, i) => ({ ip: `10.${String(base)}.${String(Math.floor(i / 256))}.${String(i % 256)}` }));
      // Two subsets: the bound counts every subset's ready and not-ready addresses together.
      body.spec['endpoints'] = { subsets: [{ addresses: ips(ready, 1), ports: [{ port: 80 }] }, { notReadyAddresses: ips(notReady, 2), ports: [{ port: 81 }] }] };
      return body;
    };
    await create(east, endpoints(2500, 2500), true);
    await assertDenied(create(east, endpoints(2500, 2501), true), /spec\.endpoints\.subsets carry 5001 addresses; at most 5000 are admitted \(leader\.admissionPolicy\.limits\.addressesPerEndpoints\)/);
  });

  it('denies updating, deleting or writing the status of another cluster\'s export', async () => {
    const theirs = await read(`${WEST}-default-nginx-service`);
    (theirs.metadata.labels ?? {})['extra'] = 'x';
    await assertDenied(replace(east, theirs), /ResourceExport west-default-nginx-service belongs to cluster "west"; ServiceAccount member-east may only update exports of cluster "east"/);
    await assertDenied(east.deleteNamespacedCustomObject({ ...reRef, name: `${WEST}-default-nginx-service` }),
      /ResourceExport west-default-nginx-service belongs to cluster "west"; ServiceAccount member-east may only delete exports of cluster "east"/);
    const status = await read(`${WEST}-default-nginx-service`);
    await assertDenied(east.replaceNamespacedCustomObjectStatus({ ...reRef, name: status.metadata.name,
      body: { ...status, status: { conditions: [{ type: 'Succeeded', status: 'True', lastTransitionTime: new Date().toISOString() }] } } }),
    /belongs to cluster "west"/);
    // west itself still may.
    await west.deleteNamespacedCustomObject({ ...reRef, name: `${WEST}-default-nginx-service` });
  });

  it('denies a member ServiceAccount that has no entry in the ConfigMap (fail closed)', async () => {
    await assertDenied(create(rogue, serviceExport('rogue', 'Service')),
      new RegExp(`ServiceAccount member-rogue has no cluster ID in ConfigMap ${LEADER_NS}/${PARAM_CONFIGMAP}: add the key member-rogue`));
    await assertDenied(rogue.deleteNamespacedCustomObject({ ...reRef, name: `${EAST}-default-nginx-endpoints` }), /member-rogue has no cluster ID/);
  });

  it('does not apply to callers that are not members: an admin, and the exempt leader controller', async () => {
    // An admin (not a ServiceAccount) may write anything, e.g. repair a broken export.
    const adminObject = serviceExport(WEST, 'Service', 'default', 'admin');
    delete adminObject.metadata.finalizers;
    adminObject.metadata.name = 'hand-made';
    await create(asAdmin, adminObject);
    // Antrea's leader controller removes the finalizer of a deleted member's export.
    await createServiceAccountWithRole(admin, { namespace: LEADER_NS, serviceAccount: 'antrea-mc-controller', rules: ANTREA_MEMBER_ROLE_RULES });
    const token = await issueToken(admin, LEADER_NS, 'antrea-mc-controller');
    await waitForAccess(cp(), token, { verb: 'update', resource: 'resourceexports', group: RESOURCE_EXPORT.group, namespace: LEADER_NS });
    const controller = customObjects(cp(), token);
    const eps = await read(`${EAST}-default-nginx-endpoints`);
    eps.metadata.finalizers = [];
    await replace(controller, eps);
  });

  it('denies every member write while the ConfigMap is missing (parameterNotFoundAction: Deny)', async () => {
    await admin.makeApiClient(CoreV1Api).deleteNamespacedConfigMap({ namespace: LEADER_NS, name: PARAM_CONFIGMAP });
    const denial = await waitFor('member writes to be denied without the ConfigMap', async () => {
      try {
        await create(east, serviceExport(EAST, 'Service', 'default', 'probe'), true);
        return false;
      } catch (err) {
        return `${String(httpStatus(err))} ${apiStatus(err)?.message ?? String(err)}`;
      }
    }, { timeoutMs: 30_000, intervalMs: 200 });
    // The API server's own answer for a missing parameter object: 422, naming the policy.
    assert.match(denial, new RegExp(`^422 .*ValidatingAdmissionPolicy '${POLICY_NAME}' .*denied request: .*no params found for policy binding with \`Deny\` parameterNotFoundAction`));
    await writeParams({ [`member-${EAST}`]: EAST });
    await waitFor('member writes to be admitted again', async () => {
      await create(east, serviceExport(EAST, 'Service', 'default', 'probe'), true);
      return true;
    }, { timeoutMs: 30_000, intervalMs: 200 });
  });
});
