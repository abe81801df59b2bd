// Which version of the MCS API (ServiceImport, ServiceExport) the member serves. The chart's
// CRDs (mcs-api v0.5) serve v1beta1 and v1alpha1; Antrea's member CRDs and clusters set up
// before v0.5 serve only v1alpha1. Asked once, when the agent starts: the agent then reads,
// watches and writes both kinds in that version (every version served reads every stored
// object: the schemas are identical and there is no conversion webhook).
import { MCS_GROUP, servedMcsVersion, type McsVersion } from '../api/mcs.js';
import { isRecord } from './json.js';
import { httpStatus } from './errors.js';
import type { JsonClient } from './json-client.js';

/** The versions discovery lists for the group, [] when the group is not served (404). */
export async function servedGroupVersions(client: Pick<JsonClient, 'request'>, group: string): Promise<string[]> {
  let answer: Record<string, unknown>;
  try {
    answer = await client.request('GET', `/apis/${group}`);
  } catch (err) {
    if (httpStatus(err) === 404) return [];
    throw err;
  }
  const versions = Array.isArray(answer['versions']) ? answer['versions'] : [];
  return versions.flatMap((v) => (isRecord(v) && typeof v['version'] === 'string' ? [v['version']] : []));
}

/** The MCS version to use on this member: v1beta1 where served, else v1alpha1. */
export async function discoverMcsVersion(client: Pick<JsonClient, 'request'>): Promise<{ version: McsVersion; served: string[] }> {
  const served = await servedGroupVersions(client, MCS_GROUP);
  return { version: servedMcsVersion(served), served };
}
