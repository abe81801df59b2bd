// `status`: whether a member's CoreDNS serves clusterset.local, from its Corefile, its image tag
// and whether its ServiceAccount may list ServiceImports. Pure: collect.ts reads, this concludes.
import { corefileServesClusterset } from '../dns/corefile.js';
import { coreDNSVersionVerdict } from '../dns/coredns-version.js';

/** What was read, or why it could not be. */
export type Read<T> = { readonly value: T } | { readonly problem: string };

export interface ClustersetDNSInput {
  /** The Corefile of kube-system/coredns. */
  readonly corefile: Read<string>;
  /** The image of the kube-system/coredns Deployment. */
  readonly image: Read<string>;
  /** Whether kube-system/coredns's ServiceAccount may list ServiceImports (a SubjectAccessReview). */
  readonly serviceImportAccess: Read<boolean>;
}

export interface ClustersetDNSView {
  readonly served: 'yes' | 'no' | 'unknown';
  readonly why: string;
}

/** yes only when all three say so; no as soon as one says no; unknown otherwise. */
export function clustersetDNSView(input: ClustersetDNSInput): ClustersetDNSView {
  const no: string[] = [];
  const unknown: string[] = [];
  if ('problem' in input.corefile) unknown.push(input.corefile.problem);
  else {
    const corefile = corefileServesClusterset(input.corefile.value);
    if (!corefile.served) no.push(`Corefile: ${corefile.why}`);
  }
  if ('problem' in input.image) unknown.push(input.image.problem);
  else {
    const version = coreDNSVersionVerdict(input.image.value);
    if (version.ok === false) no.push(version.why);
    else if (version.ok === undefined) unknown.push(version.why);
  }
  if ('problem' in input.serviceImportAccess) unknown.push(input.serviceImportAccess.problem);
  else if (!input.serviceImportAccess.value) no.push('CoreDNS\'s ServiceAccount may not list ServiceImports (chart value dns.coreDNSAccess, or join --configure-dns)');
  if (no.length > 0) return { served: 'no', why: no.join('; ') };
  if (unknown.length > 0) return { served: 'unknown', why: unknown.join('; ') };
  return { served: 'yes', why: 'the kubernetes plugin has clusterset.local with multicluster, CoreDNS is new enough and may list ServiceImports' };
}

export function renderClustersetDNS(view: ClustersetDNSView): string {
  return `clusterset.local served: ${view.served} (${view.why})\n`;
}
