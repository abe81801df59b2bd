// Which CoreDNS a member runs, read from the image tag of its `kube-system/coredns` Deployment,
// and whether it can serve clusterset.local: the kubernetes plugin's `multicluster` option
// arrived in CoreDNS 1.12.2 (coredns/coredns PR #7266). Pure.

export const MULTICLUSTER_MIN_VERSION = [1, 12, 2] as const;
export const MULTICLUSTER_MIN_TEXT = MULTICLUSTER_MIN_VERSION.join('.');

export type CoreDNSVersionVerdict =
  | { readonly ok: true; readonly version: string }
  /** Too old: a Corefile with `multicluster` would make it fail to load its configuration. */
  | { readonly ok: false; readonly version: string; readonly why: string }
  /** The tag says no version (a digest, `latest`, a custom build): nobody can tell. */
  | { readonly ok: undefined; readonly why: string };

/** `registry.k8s.io/coredns/coredns:v1.11.3` → [1, 11, 3]; undefined when the tag is not a version. */
export function coreDNSImageVersion(image: string): [number, number, number] | undefined {
  const withoutDigest = image.split('@')[0] ?? '';
  const slash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.lastIndexOf(':');
  if (colon <= slash) return undefined;
  const match = /^v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(withoutDigest.slice(colon + 1));
  if (match === null) return undefined;
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

/** Whether the CoreDNS of `image` can serve clusterset.local. */
export function coreDNSVersionVerdict(image: string | undefined): CoreDNSVersionVerdict {
  if (image === undefined || image === '') return { ok: undefined, why: 'the kube-system/coredns Deployment names no image' };
  const version = coreDNSImageVersion(image);
  if (version === undefined) return { ok: undefined, why: `the image ${image} has no version tag; CoreDNS ${MULTICLUSTER_MIN_TEXT} or newer is needed` };
  const text = version.join('.');
  for (let i = 0; i < 3; i++) {
    const have = version[i] ?? 0;
    const need = MULTICLUSTER_MIN_VERSION[i] ?? 0;
    if (have > need) break;
    if (have < need) return { ok: false, version: text, why: `CoreDNS ${text} (${image}) is older than ${MULTICLUSTER_MIN_TEXT}, the first with the kubernetes plugin's multicluster option; upgrade CoreDNS first` };
  }
  return { ok: true, version: text };
}
