import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  AuditLog,
  DEFAULT_KEY_DIR,
  describeHead,
  FileHeadWitness,
  loadOrCreateSigner,
  PostgresAuditStore,
  readHeadFile,
  TransparencyLog,
  verifyWitnessedHeads,
  type WitnessedHeadCheck,
} from '../audit/index.js';
import { DATABASE_OPTION_HELP, openCommandDatabase } from './database-option.js';
import { type CliIo, EXIT, UsageError } from './io.js';
import { verifierKeys } from './verifier-keys.js';

export const AUDIT_USAGE = `Usage:
  veridex audit verify --witness heads.jsonl --key <public key | key file> [--key ...] [--hmac-secret-env NAME] [--json]
  veridex audit publish --witness heads.jsonl [--key-dir DIR]

verify   checks the database's current audit log against every head in a witness head file
         (one signed tree head per line): each thread must still extend every head of it, and
         the recorded thread heads every global head (which vouches for all threads it
         covers). Reports the first inconsistency. Exit 0 consistent, 1 not, 2 usage error.
publish  signs a tree head for every thread that grew since its last head, then a global
         head over all of them, with the evidence key in --key-dir (default ${DEFAULT_KEY_DIR}),
         records them and appends them to the witness file. Ship that file off this host.
         A thread that grew is checked against its earlier heads first (a rewritten one is
         refused); threads that did not grow are not re-read: \`audit verify\` checks all.
${DATABASE_OPTION_HELP}`;

/** `veridex audit verify|publish`. */
export async function auditCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      witness: { type: 'string' },
      key: { type: 'string', multiple: true },
      'hmac-secret-env': { type: 'string', multiple: true },
      'key-dir': { type: 'string' },
      json: { type: 'boolean' },
      'database-url': { type: 'string' },
    },
  });
  const [action, ...rest] = positionals;
  if ((action !== 'verify' && action !== 'publish') || rest.length > 0) {
    throw new UsageError('expected `audit verify` or `audit publish`');
  }
  if (!values.witness) throw new UsageError('give the witness head file with --witness');
  const witness = values.witness;
  if (action === 'verify') {
    const keys = verifierKeys(values);
    if (!existsSync(witness)) throw new UsageError(`cannot read ${witness}: ENOENT`);
    const entries = readHeadFile(witness).map((entry) => ({ at: entry.line, value: entry.value }));
    const db = await openCommandDatabase(values['database-url']);
    try {
      const audit = new AuditLog({ store: new PostgresAuditStore(db), secretFingerprints: false });
      const result = await verifyWitnessedHeads(audit, entries, { keys });
      if (values.json) {
        io.out(JSON.stringify(result, null, 2));
      } else {
        io.out(
          result.valid
            ? `CONSISTENT   the audit log extends all ${entries.length} head(s) of ${witness}`
            : `INCONSISTENT the audit log does not extend what ${witness} published`,
        );
        const threadHeads = result.checks.filter((check) => check.globalIndex !== undefined);
        if (threadHeads.length > 0) {
          io.out(`  vouched     ${threadHeads.length} thread head(s) covered by the global heads`);
        }
        if (result.first) io.out(`  first       ${describeCheck(witness, result.first)}`);
        const failed = result.checks.filter((check) => check.status !== 'consistent');
        if (failed.length > 1) io.out(`  failures    ${failed.length} in all (--json lists them)`);
      }
      return result.valid ? EXIT.ok : EXIT.failed;
    } finally {
      await db.close();
    }
  }
  const { signer, created, publicKeyPath } = loadOrCreateSigner(
    values['key-dir'] ?? DEFAULT_KEY_DIR,
  );
  if (created) io.out(`created an evidence key; its public key is ${publicKeyPath}`);
  const db = await openCommandDatabase(values['database-url']);
  try {
    const audit = new AuditLog({
      store: new PostgresAuditStore(db),
      secretFingerprints: false,
      witnesses: [new FileHeadWitness(witness, { keys: [signer.verifier()] })],
    });
    const published = await new TransparencyLog({ audit, signers: [signer] }).publish();
    for (const head of published.threads) io.out(`  signed      ${describeHead(head)}`);
    io.out(`  signed      ${describeHead(published.global)}, root ${published.global.rootHash}`);
    io.out(`PUBLISHED    to ${witness} (key ${signer.keyId})`);
    return EXIT.ok;
  } finally {
    await db.close();
  }
}

function describeCheck(file: string, check: WitnessedHeadCheck): string {
  const where =
    check.globalIndex === undefined
      ? `${file}:${check.at}`
      : `${file}:${check.at} (thread head ${check.globalIndex} of the global log)`;
  const what = check.head ? `${describeHead(check.head)}: ` : '';
  return `${where} ${what}${check.status === 'invalid' ? 'INVALID HEAD: ' : ''}${check.reason ?? ''}`;
}
