/** Command-line options of `npm run soak`, with their defaults. */
export interface SoakOptions {
  /** PostgreSQL URL (loopback only). */
  url: string;
  workers: number;
  /** Threads started and not yet finished, across all workers. */
  inFlight: number;
  /** Time budget for starting new threads. */
  minutes: number;
  /** At most this many threads in the whole run (the bounded request count). */
  maxThreads: number;
  /** Single-tier approval timeout of the workers' ApprovalManager. */
  approvalTimeoutS: number;
  /** Approvers decide after a random delay up to this. */
  maxDecisionDelayS: number;
  /** Clock skew of the second approver process (negative: behind). 0 disables. */
  skewS: number;
  /** After the budget: keep workers and approvers running this long for threads to finish. */
  drainS: number;
  kill: boolean;
  killEveryS: number;
  terminate: boolean;
  terminateEveryS: number;
  /** One PostgreSQL restart (`pg_ctlcluster --skip-systemctl-redirect <ver> main restart`). */
  pgRestart: boolean;
  /** When the restart happens, as a fraction of the budget. */
  pgRestartAt: number;
  seed: number;
  keepSchema: boolean;
  /** Check every thread (default) or a random sample of this size for the expensive checks. */
  checkSample: number;
}

const DEFAULTS: SoakOptions = {
  url: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test',
  workers: 4,
  inFlight: 100,
  minutes: 10,
  maxThreads: 20_000,
  approvalTimeoutS: 30,
  maxDecisionDelayS: 8,
  skewS: -90,
  drainS: 360,
  kill: true,
  killEveryS: 45,
  terminate: true,
  terminateEveryS: 20,
  pgRestart: true,
  pgRestartAt: 0.8,
  seed: 20,
  keepSchema: false,
  checkSample: 0,
};

const USAGE = `npm run soak -- [--minutes 10] [--workers 4] [--in-flight 100] [--max-threads 20000]
  [--approval-timeout-s 30] [--max-decision-delay-s 8] [--skew-s -90] [--drain-s 360]
  [--kill-every-s 45] [--terminate-every-s 20] [--pg-restart-at 0.8] [--seed 20]
  [--no-kill] [--no-terminate] [--no-pg-restart] [--no-faults] [--keep-schema] [--url URL]`;

/** Parses `argv` (after the script name). Exits with usage on anything unknown. */
export function parseSoakOptions(argv: readonly string[]): SoakOptions {
  const options = { ...DEFAULTS };
  const numeric: Record<string, keyof SoakOptions> = {
    '--workers': 'workers',
    '--in-flight': 'inFlight',
    '--minutes': 'minutes',
    '--max-threads': 'maxThreads',
    '--approval-timeout-s': 'approvalTimeoutS',
    '--max-decision-delay-s': 'maxDecisionDelayS',
    '--skew-s': 'skewS',
    '--drain-s': 'drainS',
    '--kill-every-s': 'killEveryS',
    '--terminate-every-s': 'terminateEveryS',
    '--pg-restart-at': 'pgRestartAt',
    '--seed': 'seed',
    '--check-sample': 'checkSample',
  };
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    const key = numeric[arg];
    if (key) {
      const value = Number(argv[++index]);
      if (!Number.isFinite(value)) fail(`${arg} needs a number`);
      (options as Record<string, unknown>)[key] = value;
    } else if (arg === '--url') options.url = argv[++index] ?? fail('--url needs a value');
    else if (arg === '--no-kill') options.kill = false;
    else if (arg === '--no-terminate') options.terminate = false;
    else if (arg === '--no-pg-restart') options.pgRestart = false;
    else if (arg === '--no-faults') {
      options.kill = false;
      options.terminate = false;
      options.pgRestart = false;
      options.skewS = 0;
    } else if (arg === '--keep-schema') options.keepSchema = true;
    else if (arg === '--help' || arg === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else fail(`unknown option ${arg}`);
  }
  const host = new URL(options.url).hostname;
  // Faults include killing connections and restarting the server: never point them elsewhere.
  if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host)) {
    fail(`the soak runs against a loopback PostgreSQL only, not ${host}`);
  }
  if (options.workers < 1 || options.inFlight < 1) fail('--workers and --in-flight must be ≥ 1');
  return options;
}

function fail(message: string): never {
  console.error(`soak: ${message}\n${USAGE}`);
  process.exit(2);
}
