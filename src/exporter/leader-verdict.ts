// What the leader says about our ResourceExports. Antrea's leader judges an RE asynchronously,
// after our write, and writes its verdict into the RE's status (`Failure`/`False` on a refusal,
// `Succeeded`/`True`); the status carries no generation (antrea-wire.md: conditions only), but
// the leader writes it over the version it judged (a status update with that resourceVersion),
// so a status is a verdict on the spec of the version it sits on. Pure.
import type { Condition } from '../common/api/meta.js';
import type { ResourceExport } from '../common/api/antrea.js';
import { nameOf } from './export-keys.js';
import { sameExport } from './service-export.js';
import { EXPORT_REASON, type Verdict } from './status-writer.js';

const CONDITION_REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

/** The leader's verdict on the REs of one export: Antrea writes `Failure`/`False` (or `Succeeded`/`True`). */
function verdictOf(res: readonly ResourceExport[], leaderNamespace: string): Verdict {
  let judged = false;
  for (const re of res) {
    const conditions: readonly Condition[] = re.status?.conditions ?? [];
    if (conditions.length > 0) judged = true;
    const failed = conditions.find((c) => c.type === 'Failure' || (c.type === 'Succeeded' && c.status === 'False'));
    if (failed) {
      const reason = failed.reason !== undefined && CONDITION_REASON.test(failed.reason) ? failed.reason : EXPORT_REASON.LeaderRejected;
      const detail = failed.message !== undefined && failed.message !== '' ? failed.message : (failed.reason ?? 'no reason given');
      return { kind: 'failed', reason, message: `the leader rejected ResourceExport ${leaderNamespace}/${nameOf(re)}: ${detail}` };
    }
  }
  return judged ? { kind: 'ok' } : { kind: 'unknown' };
}

/**
 * The leader's verdict on `desired` (the REs of one export as they should be now), from what we
 * know of those REs on the leader: `live`, and `writtenVersion`, the resourceVersion of our own
 * last write of it. Unknown while the leader has not judged them. A status counts only when
 * the spec of the version it sits on is `desired`'s and the version is not our own write
 * (which keeps the status the leader wrote about the spec before). A refusal of any RE stands;
 * an acceptance only once the leader judged all of them.
 */
export function verdictOn(
  desired: readonly ResourceExport[],
  known: readonly { readonly live: ResourceExport; readonly writtenVersion?: string | undefined }[],
  leaderNamespace: string,
): Verdict {
  const wanted = new Map(desired.map((re) => [nameOf(re), re]));
  const judgedSomething = (live: ResourceExport) => (live.status?.conditions?.length ?? 0) > 0;
  const pending = (e: (typeof known)[number]): boolean => {
    if (!judgedSomething(e.live)) return false;
    const want = wanted.get(nameOf(e.live));
    // Judged another spec (an older one, or someone's edit the reconcile repairs): not about `desired`.
    if (want !== undefined && !sameExport(want, e.live)) return true;
    // Still the answer to our own write, with the status of the spec before it.
    return e.writtenVersion !== undefined && e.writtenVersion === e.live.metadata?.resourceVersion;
  };
  const judged = verdictOf(known.filter((e) => !pending(e)).map((e) => e.live), leaderNamespace);
  if (judged.kind === 'failed' || !known.some(pending)) return judged;
  return { kind: 'unknown' };
}
