// ResourceImports as a real Antrea leader writes them, and helpers to read what the agent
// materialised in the member.
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { RESOURCE_IMPORT, type ResourceImport } from '../../src/common/api/antrea.js';
import { LEADER_NS } from './clusterset.js';

export function serviceImportRI(namespace: string, name: string, ports: { name: string; port: number; protocol?: string }[], clusterIDs?: string[]): ResourceImport {
  return {
    apiVersion: `${RESOURCE_IMPORT.group}/${RESOURCE_IMPORT.version}`, kind: RESOURCE_IMPORT.kind,
    metadata: { name: `${namespace}-${name}-service`, namespace: LEADER_NS },
    spec: {
      ...(clusterIDs ? { clusterID: clusterIDs } : {}),
      name, namespace, kind: 'ServiceImport',
      serviceImport: { spec: { type: 'ClusterSetIP', ports: ports.map((p) => ({ name: p.name, port: p.port, protocol: p.protocol ?? 'TCP' })) } },
    },
  };
}

export function endpointsRI(namespace: string, name: string, ips: string[], port = 80): ResourceImport {
  return {
    apiVersion: `${RESOURCE_IMPORT.group}/${RESOURCE_IMPORT.version}`, kind: RESOURCE_IMPORT.kind,
    metadata: { name: `${namespace}-${name}-endpoints`, namespace: LEADER_NS },
    spec: {
      name, namespace, kind: 'Endpoints',
      endpoints: { subsets: [{ addresses: ips.map((ip) => ({ ip })), ports: [{ name: 'http', port, protocol: 'TCP' }] }] },
    },
  };
}

export function clusterInfoRI(exportingClusterID: string, serviceCIDR: string): ResourceImport {
  return {
    apiVersion: `${RESOURCE_IMPORT.group}/${RESOURCE_IMPORT.version}`, kind: RESOURCE_IMPORT.kind,
    metadata: { name: `${exportingClusterID}-clusterinfo`, namespace: LEADER_NS },
    spec: {
      name: exportingClusterID, namespace: 'kube-system', kind: 'ClusterInfo',
      clusterinfo: { clusterID: exportingClusterID, serviceCIDR, gatewayInfos: [{ gatewayIP: '172.18.0.10' }], podCIDRs: ['10.244.0.0/16'] },
    },
  };
}

export function leaderImports(kc: KubeConfig) {
  const api = kc.makeApiClient(CustomObjectsApi);
  const ref = { group: RESOURCE_IMPORT.group, version: RESOURCE_IMPORT.version, plural: RESOURCE_IMPORT.plural, namespace: LEADER_NS };
  return {
    create: async (ri: ResourceImport) => (await api.createNamespacedCustomObject({ ...ref, body: ri })) as ResourceImport,
    get: async (name: string) => (await api.getNamespacedCustomObject({ ...ref, name })) as ResourceImport,
    replace: async (ri: ResourceImport) => (await api.replaceNamespacedCustomObject({ ...ref, name: ri.metadata?.name ?? '', body: ri })) as ResourceImport,
    delete: async (name: string) => { await api.deleteNamespacedCustomObject({ ...ref, name }); },
  };
}

/** 404 → undefined, anything else rethrown. */
export async function maybe<T>(fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

export function memberReads(kc: KubeConfig) {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  return {
    service: (ns: string, name: string) => maybe(() => core.readNamespacedService({ namespace: ns, name })),
    endpoints: (ns: string, name: string) => maybe(() => core.readNamespacedEndpoints({ namespace: ns, name })),
    serviceImport: (ns: string, name: string) => maybe(async () => (await custom.getNamespacedCustomObject({ group: 'multicluster.x-k8s.io', version: 'v1alpha1', plural: 'serviceimports', namespace: ns, name })) as { spec?: { ips?: string[]; ports?: { port: number }[] }; metadata?: { uid?: string; resourceVersion?: string } }),
    clusterInfoImport: (ns: string, name: string) => maybe(async () => (await custom.getNamespacedCustomObject({ group: 'multicluster.crd.antrea.io', version: 'v1alpha1', plural: 'clusterinfoimports', namespace: ns, name })) as { spec?: { serviceCIDR?: string } }),
    /** Every object of the importable kinds in the member, as `kind ns/name uid rv`. */
    async snapshot(): Promise<string[]> {
      const rows: string[] = [];
      for (const s of (await core.listServiceForAllNamespaces()).items) rows.push(`Service ${s.metadata?.namespace ?? ''}/${s.metadata?.name ?? ''} ${s.metadata?.uid ?? ''} ${s.metadata?.resourceVersion ?? ''}`);
      for (const e of (await core.listEndpointsForAllNamespaces()).items) rows.push(`Endpoints ${e.metadata?.namespace ?? ''}/${e.metadata?.name ?? ''} ${e.metadata?.uid ?? ''} ${e.metadata?.resourceVersion ?? ''}`);
      for (const plural of ['serviceimports', 'clusterinfoimports']) {
        const group = plural === 'serviceimports' ? 'multicluster.x-k8s.io' : 'multicluster.crd.antrea.io';
        const list = (await custom.listCustomObjectForAllNamespaces({ group, version: 'v1alpha1', resourcePlural: plural })) as { items: { metadata?: { namespace?: string; name?: string; uid?: string; resourceVersion?: string } }[] };
        for (const o of list.items) rows.push(`${plural} ${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''} ${o.metadata?.uid ?? ''} ${o.metadata?.resourceVersion ?? ''}`);
      }
      return rows.sort();
    },
  };
}
