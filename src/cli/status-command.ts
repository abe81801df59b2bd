// `clusterset-agent status`: every ClusterSet of one cluster (a member's view of its leader, or
// a leader's own ClusterSet with its members), problems first. Exit 0 when nothing needs
// attention, 3 when something does, 1 when the cluster could not be read, 2 for a bad command
// line. Also runs as the kubectl plugin `kubectl clusterset status` (bin/kubectl-clusterset).
import { Command, Option } from 'commander';
import { KubeConfig } from '@kubernetes/client-node';
import { collectReports, StatusReadError } from './report/collect.js';
import { DEFAULT_STALE_AFTER_SECONDS, exitCodeOf } from './report/model.js';
import { parseDuration } from '../leader/member-token.js';
import { renderReports } from './report/render.js';
import { collectClustersetDNS } from './report/collect-dns.js';
import { clustersetDNSView, renderClustersetDNS } from './report/dns.js';
import { describeError } from '../common/kube/errors.js';
import { describeOption, EXIT_USAGE, valueNotAFlag, type CommandIO, type ExitStatus } from './command.js';

interface StatusFlags {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly namespace?: string;
  readonly output?: string;
  readonly staleAfter?: string;
}

export function statusCommand(io: CommandIO, status: ExitStatus): Command {
  const command = new Command('status')
    .argument('[clusterset]', 'only the ClusterSet of this name')
    .summary('show every ClusterSet of a cluster: leader, readiness, members, exports, imports, credentials')
    .description(
      'Shows every ClusterSet of one cluster, problems first: on a member, its leader, Ready with reason and last ' +
        "heartbeat, the leader token's expiry, imports with rejected and conflicting counts, its ServiceExports with " +
        "their verdicts and the Warning Events on the ClusterSet; on a leader, its members' liveness, refused exports " +
        'and imports by kind. It judges the last heartbeat (a member) and the members\' last beats shown connected (a ' +
        'leader) against --stale-after, and every warning condition (DuplicateClusterID, ImportsSynced=False). ' +
        'Read-only. Exit codes: 0 nothing needs attention, 3 something does (listed), 1 the ' +
        'cluster could not be read, 2 a bad command line.',
    )
    .addHelpText('after', '\nExamples:\n  clusterset-agent status --context member-east\n  kubectl clusterset status -o json   (as a kubectl plugin)\n');
  const option = (flags: string, text: string, extras: { env?: string; default?: string }): void => {
    const added = new Option(flags, describeOption(text, extras));
    command.addOption(added.argParser(valueNotAFlag(command, added)));
  };
  option('--kubeconfig <file>', 'Kubeconfig of the cluster to look at (member or leader).', { env: 'KUBECONFIG', default: '~/.kube/config' });
  option('--context <name>', 'Context of that kubeconfig.', { default: 'its current context' });
  option('-n, --namespace <ns>', 'Only ClusterSets in this namespace.', { default: 'all namespaces' });
  option('-o, --output <text|json>', 'Output format.', { default: 'text' });
  option('--stale-after <5m|seconds>', "A heartbeat this old while shown Ready needs attention: the agent, or the leader's controller, is not running.", { default: `${String(DEFAULT_STALE_AFTER_SECONDS / 60)}m` });
  return command.action(async (name: string | undefined, values: StatusFlags) => {
    status.code = await runStatus(name, values, io);
  });
}

async function runStatus(name: string | undefined, values: StatusFlags, io: CommandIO): Promise<number> {
  const output = values.output ?? 'text';
  if (output !== 'text' && output !== 'json') {
    io.stderr.write(`error: --output must be text or json, not ${JSON.stringify(output)} (see 'clusterset-agent status --help')\n`);
    return EXIT_USAGE;
  }
  let staleAfterSeconds: number | undefined;
  if (values.staleAfter !== undefined) {
    try {
      staleAfterSeconds = parseDuration(values.staleAfter);
    } catch {
      io.stderr.write(`error: --stale-after must be seconds or a duration like 5m, not ${JSON.stringify(values.staleAfter)}\n`);
      return EXIT_USAGE;
    }
  }
  const kc = new KubeConfig();
  try {
    if (values.kubeconfig !== undefined) kc.loadFromFile(values.kubeconfig);
    else kc.loadFromDefault();
    if (values.context !== undefined) {
      if (kc.getContextObject(values.context) === null) throw new Error(`it has no context ${values.context} (contexts: ${kc.getContexts().map((c) => c.name).join(', ')})`);
      kc.setCurrentContext(values.context);
    }
  } catch (err) {
    io.stderr.write(`error: cannot load kubeconfig ${values.kubeconfig ?? '(default: $KUBECONFIG or ~/.kube/config)'}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  try {
    const reports = await collectReports(kc, { ...(staleAfterSeconds !== undefined && { staleAfterSeconds }), ...(values.namespace !== undefined && { namespace: values.namespace }), ...(name !== undefined && { name }) });
    if (name !== undefined && reports.length === 0) {
      io.stderr.write(`error: no ClusterSet ${name}${values.namespace === undefined ? '' : ` in namespace ${values.namespace}`}\n`);
      return 1;
    }
    // A member cluster: does the name MCS users dial, clusterset.local, resolve there?
    const dns = reports.some((r) => r.role === 'member') ? clustersetDNSView(await collectClustersetDNS(kc)) : undefined;
    io.stdout.write(output === 'json'
      ? `${JSON.stringify({ clusterSets: reports, ...(dns !== undefined && { clustersetDNS: dns }) }, null, 2)}\n`
      : `${renderReports(reports)}${dns === undefined ? '' : `\n${renderClustersetDNS(dns)}`}`);
    return exitCodeOf(reports);
  } catch (err) {
    io.stderr.write(`error: ${err instanceof StatusReadError ? err.message : describeError(err)}\n`);
    return 1;
  }
}
