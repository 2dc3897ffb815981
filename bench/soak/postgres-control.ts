// Restarting the local PostgreSQL for the soak's restart fault, and making sure it is running
// again whatever happens to the harness (other work on the machine shares this server).
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The local cluster serving `port`, as `pg_lsclusters` lists it. */
export interface Cluster {
  version: string;
  name: string;
  port: number;
  online: boolean;
}

function parseClusters(text: string): Cluster[] {
  return text
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields.length >= 4 && /^\d+$/.test(fields[0]!))
    .map(([version, name, port, status]) => ({
      version: version!,
      name: name!,
      port: Number(port),
      online: status!.startsWith('online'),
    }));
}

/** The cluster on `port`, or undefined when `pg_lsclusters` is missing or lists none. */
export function findCluster(port: number): Cluster | undefined {
  try {
    const text = execFileSync('pg_lsclusters', ['--no-header'], { encoding: 'utf8' });
    return parseClusters(text).find((cluster) => cluster.port === port);
  } catch {
    return undefined;
  }
}

/** Restarts the cluster; resolves when `pg_ctlcluster` returns (the server accepts connections). */
export async function restartCluster(cluster: Cluster): Promise<void> {
  await run(
    'pg_ctlcluster',
    ['--skip-systemctl-redirect', cluster.version, cluster.name, 'restart'],
    { timeout: 120_000 },
  );
}

/**
 * Starts the cluster if it is not running. Synchronous, so it also works from an `exit`
 * handler: whatever stopped the harness, the shared server is left running.
 */
export function ensureClusterUp(cluster: Cluster): boolean {
  const current = findCluster(cluster.port);
  if (current?.online) return false;
  execFileSync(
    'pg_ctlcluster',
    ['--skip-systemctl-redirect', cluster.version, cluster.name, 'start'],
    { stdio: 'ignore', timeout: 120_000 },
  );
  return true;
}
