// A member ClusterSet being deleted waits for the agent's leave finalizer, which the agent
// removes once it has withdrawn the announce and exports from the leader. Without the agent
// (uninstalled by `helm uninstall` before `leave`, or not running) it never goes, and the
// namespace or CRD deletion behind it hangs. Pure.
import type { ClusterSet } from '../../common/api/antrea.js';
import { LEAVE_FINALIZER } from '../../clusterset/controller.js';

/** Seconds a deletion may take before it is worth reporting: a few heartbeats' worth of withdrawing. */
export const STUCK_AFTER_SECONDS = 60;

export function stuckDeletionProblem(cs: ClusterSet, nowMs: number, agentNotRunning: boolean): string | undefined {
  // A string on the wire, whatever the client type says.
  const since = cs.metadata?.deletionTimestamp as unknown as string | null | undefined;
  if (since === undefined || since === null) return undefined;
  const finalizers = cs.metadata?.finalizers ?? [];
  if (finalizers.length === 0) return undefined;
  const ageSeconds = Math.round((nowMs - Date.parse(since)) / 1000);
  if (!agentNotRunning && ageSeconds < STUCK_AFTER_SECONDS) return undefined;
  const held = finalizers.includes(LEAVE_FINALIZER)
    ? `the agent's finalizer ${LEAVE_FINALIZER}, which only the running agent removes (after withdrawing from the leader)`
    : `finalizer(s) ${finalizers.join(', ')}`;
  const why = agentNotRunning ? 'the agent is not running (above)' : 'is the agent running? (helm uninstall before leave removes it)';
  return `being deleted since ${since}, held by ${held}: ${why}. Start the agent again and it finishes; ` +
    `or, if the agent is gone for good, remove the finalizer by hand (docs/install.md, "Uninstall")`;
}
