// Shows the control planes' logs under a failed test, so a red run explains itself.
import { afterEach } from 'node:test';
import type { ControlPlane } from './control-plane.js';

export function onFailureShowLogs(controlPlanes: () => readonly (ControlPlane | undefined)[], extra?: () => string): void {
  afterEach((t) => {
    // `passed` exists on the test context since Node 21.2; @types/node does not declare it for hooks.
    if ((t as { passed?: boolean }).passed !== false) return;
    const parts = controlPlanes().filter((cp): cp is ControlPlane => cp !== undefined).map((cp) => cp.logs(40));
    if (extra) parts.push(extra());
    t.diagnostic(`logs after failure of "${t.name}":\n${parts.join('\n')}`);
    process.stderr.write(`\n===== logs after failure of "${t.name}" =====\n${parts.join('\n')}\n`);
  });
}
