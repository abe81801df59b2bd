// Reads what `status` needs to say whether clusterset.local is served in a member: the Corefile
// and the image of kube-system/coredns, and whether its ServiceAccount may list ServiceImports
// (a SubjectAccessReview: asks, changes nothing). Each read that fails becomes the reason for an
// "unknown", never an error of the command.
import type { KubeConfig } from '@kubernetes/client-node';
import { apisOf } from '../../common/kube/typed-api.js';
import { describeError, httpStatus } from '../../common/kube/errors.js';
import { COREDNS_NAME, COREDNS_NAMESPACE, COREFILE_KEY } from '../dns/configure.js';
import type { ClustersetDNSInput, Read } from './dns.js';

async function read<T>(what: string, fn: () => Promise<T | undefined>, missing: string): Promise<Read<T>> {
  try {
    const value = await fn();
    return value === undefined ? { problem: missing } : { value };
  } catch (err) {
    const code = httpStatus(err);
    if (code === 404) return { problem: missing };
    if (code === 403) return { problem: `not allowed to read ${what}` };
    return { problem: `cannot read ${what}: ${describeError(err)}` };
  }
}

export async function collectClustersetDNS(kc: KubeConfig): Promise<ClustersetDNSInput> {
  const ref = `${COREDNS_NAMESPACE}/${COREDNS_NAME}`;
  const { core, apps, authorization } = apisOf(kc, 'status');
  const [corefile, image, serviceImportAccess] = await Promise.all([
    read(`ConfigMap ${ref}`, async () => (await core.readNamespacedConfigMap({ namespace: COREDNS_NAMESPACE, name: COREDNS_NAME })).data?.[COREFILE_KEY],
      `no ConfigMap ${ref} with a ${COREFILE_KEY}: this member's DNS is not CoreDNS configured the usual way`),
    read(`Deployment ${ref}`, async () => (await apps.readNamespacedDeployment({ namespace: COREDNS_NAMESPACE, name: COREDNS_NAME })).spec?.template.spec?.containers[0]?.image,
      `no Deployment ${ref}: the CoreDNS version is not known`),
    read('SubjectAccessReviews (create)', async () => (await authorization.createSubjectAccessReview({ body: { spec: {
      user: `system:serviceaccount:${COREDNS_NAMESPACE}:${COREDNS_NAME}`,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${COREDNS_NAMESPACE}`, 'system:authenticated'],
      resourceAttributes: { group: 'multicluster.x-k8s.io', resource: 'serviceimports', verb: 'list' },
    } } })).status?.allowed, 'the SubjectAccessReview gave no answer'),
  ]);
  return { corefile, image, serviceImportAccess };
}
