// A Service exported from a member the way a user does it: the Service, its endpoints (an
// EndpointSlice as kube's EndpointSlice controller would write it: the bare test control planes
// run none), then the ServiceExport. The MCS, dual-stack, exported-labels and several-leaders
// tests share it.
import {
  CoreV1Api, CustomObjectsApi, DiscoveryV1Api, type DiscoveryV1EndpointPort, type KubeConfig, type V1ObjectMeta, type V1Service, type V1ServiceSpec,
} from '@kubernetes/client-node';
import { SERVICE_EXPORT, type ServiceExport } from '../../src/common/api/mcs.js';

export interface ServiceToExport {
  /** The Service's own labels and annotations (its name is the export's). */
  readonly metadata?: Pick<V1ObjectMeta, 'labels' | 'annotations'>;
  readonly spec: V1ServiceSpec;
  /**
   * One ready endpoint with these addresses in an IPv4 EndpointSlice `<name>-abc`; none for a
   * Service whose endpoints kube's own controllers write (a selector on fuller control planes).
   */
  readonly endpoints?: { readonly addresses: string[]; readonly ports: DiscoveryV1EndpointPort[] };
  /** The ServiceExport's spec (exported labels and annotations). */
  readonly exportSpec?: ServiceExport['spec'];
}

/** Creates the Service, its EndpointSlice (when given), then the ServiceExport: the Service as created, and when the ServiceExport was sent (an export's start). */
export async function exportService(kc: KubeConfig, namespace: string, name: string, service: ServiceToExport): Promise<{ service: V1Service; exportedAt: number }> {
  const created = await kc.makeApiClient(CoreV1Api).createNamespacedService({ namespace, body: { metadata: { ...service.metadata, name }, spec: service.spec } });
  if (service.endpoints) {
    await kc.makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({
      namespace,
      body: {
        metadata: { name: `${name}-abc`, labels: { 'kubernetes.io/service-name': name } }, addressType: 'IPv4',
        endpoints: [{ addresses: service.endpoints.addresses, conditions: { ready: true } }], ports: service.endpoints.ports,
      },
    });
  }
  const exportedAt = Date.now();
  await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: SERVICE_EXPORT.group, version: SERVICE_EXPORT.version, plural: SERVICE_EXPORT.plural, namespace,
    body: { apiVersion: SERVICE_EXPORT.apiVersion, kind: SERVICE_EXPORT.kind, metadata: { name }, ...(service.exportSpec !== undefined && { spec: service.exportSpec }) },
  });
  return { service: created, exportedAt };
}
