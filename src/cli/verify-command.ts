import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { assertTrustedFile, verifyEvidence } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import {
  type Approver,
  changesForKeys,
  type DirectoryChangeRecord,
  parseApprovers,
  parseDirectoryChangeEvents,
  readDirectoryChanges,
} from '../identity/index.js';
import { readEarlierViews } from './earlier-views.js';
import { type CliIo, EXIT, UsageError } from './io.js';
import { verifierKeys } from './verifier-keys.js';

export const VERIFY_USAGE = `Usage: veridex verify <bundle.json | URL> --key <public key | key file> [--key ...] [--hmac-secret-env NAME] [--approvers approvers.json] [--since older.json ...]

Verifies a signed evidence bundle offline and prints who decided every approval. The bundle is
a file, or an http(s) URL such as an approvals service's /api/threads/<id>/evidence (sent with
$VERIDEX_INBOX_TOKEN as a Bearer token when set); a fetched bundle is checked like a file.
Exit code 0 valid, 1 invalid, 2 usage error.
  --key              Ed25519 public key: a PEM file, or 64 hex digits (repeatable)
  --hmac-secret-env  name of an environment variable holding an HMAC secret (repeatable)
  --approvers        the approver directory you trust (veridex approvers export): every
                     signed decision's key must belong to the approver it names; the
                     directory changes it carries for those keys (who added or revoked
                     them, and how that was proved) are listed
  --since            an older bundle of the same thread, a signed tree head, or a witness
                     head file (heads.jsonl): the bundle must be an honest extension of it —
                     nothing it covered rewritten, dropped, inserted or reordered (repeatable)
  --allow-unverified accept approvals decided in the explicit unverified development mode
                     (bare names: nobody proved who decided); without it such a bundle is
                     INVALID. They are still listed as UNVERIFIED.
  --trust-bundle-keys
                     without --approvers, count approvals signed by keys only the bundle
                     vouches for; without either, a bundle whose executed calls needed
                     approval is INVALID (whoever holds the evidence key could have minted
                     approver keys too)
  --json             print the full verification result as JSON

Trust files (--key files, --approvers) must be owned by you or root and writable by no one
else; otherwise verify refuses them (exit 2).`;

/** `veridex verify`: prints a short human summary and returns the exit code. */
export async function verifyCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      key: { type: 'string', multiple: true },
      'hmac-secret-env': { type: 'string', multiple: true },
      approvers: { type: 'string' },
      since: { type: 'string', multiple: true },
      'allow-unverified': { type: 'boolean' },
      'trust-bundle-keys': { type: 'boolean' },
      json: { type: 'boolean' },
    },
  });
  const [file] = positionals;
  if (!file || positionals.length > 1) throw new UsageError('expected exactly one bundle file');
  const keys = verifierKeys(values);
  // Both named opt-ins weaker than the default travel together into every verification.
  const allowUnverified = {
    ...(values['allow-unverified'] ? { allowUnverified: true } : {}),
    ...(values['trust-bundle-keys'] ? { trustBundleKeys: true } : {}),
  };
  let approvers: Approver[] | undefined;
  let history: { changes: DirectoryChangeRecord[]; problems: string[] } | undefined;
  if (values.approvers) {
    try {
      assertTrustedFile(values.approvers);
      const text = readFileSync(values.approvers, 'utf8');
      approvers = parseApprovers(text);
      history = readDirectoryChanges(parseDirectoryChangeEvents(text));
    } catch (error) {
      const why = VeridexError.is(error)
        ? error.message
        : `cannot read ${values.approvers}: ${(error as NodeJS.ErrnoException).code}`;
      throw new UsageError(why);
    }
  }

  const text = /^https?:\/\//i.test(file) ? await fetchBundle(file) : readBundleFile(file);
  let bundle: unknown;
  try {
    bundle = JSON.parse(text);
  } catch {
    bundle = undefined;
  }
  const result =
    bundle === undefined
      ? {
          valid: false,
          reasons: ['file is not JSON'],
          signatures: [],
          body: undefined,
          decisions: [],
        }
      : verifyEvidence(bundle, { keys, ...(approvers ? { approvers } : {}), ...allowUnverified });
  const since = (values.since ?? []).flatMap((path) => {
    const views = readEarlierViews(path, result.body?.threadId);
    if (views.length === 0) {
      return [{ label: path, valid: false, reasons: ['the file holds no head of this thread'] }];
    }
    return views.map((view) => {
      const checked = verifyEvidence(bundle, {
        keys,
        ...(approvers ? { approvers } : {}),
        ...allowUnverified,
        previous: view.value,
      });
      // Only what the earlier view adds: the bundle's own problems are reported once, below.
      const own = new Set(result.reasons);
      const reasons = checked.reasons.filter((reason) => !own.has(reason));
      return {
        label: view.label,
        valid: reasons.length === 0,
        reasons,
        ...(checked.log?.since ? { check: checked.log.since } : {}),
      };
    });
  });
  // The directory's own history must hold (chain and proofs) for it to vouch for any key.
  const directoryProblems = (history?.problems ?? []).map(
    (problem) => `approvers file: ${problem}`,
  );
  const decisionKeys = new Set(
    result.decisions.flatMap((check) => (check.keyId !== undefined ? [check.keyId] : [])),
  );
  const directory = history ? changesForKeys(history.changes, decisionKeys) : [];
  const valid =
    result.valid && directoryProblems.length === 0 && since.every((entry) => entry.valid);
  if (values.json) {
    io.out(
      JSON.stringify(
        {
          valid,
          reasons: [...result.reasons, ...directoryProblems],
          signatures: result.signatures,
          decisions: result.decisions,
          ...(result.log ? { log: result.log } : {}),
          ...(since.length > 0 ? { since } : {}),
          ...(history ? { directory } : {}),
        },
        null,
        2,
      ),
    );
    return valid ? EXIT.ok : EXIT.failed;
  }
  const body = result.body;
  io.out(valid ? `VALID   ${file}` : `INVALID ${file}`);
  for (const signature of result.signatures)
    io.out(`  signer      ${signature.keyid} (${signature.status})`);
  if (body && Array.isArray(body.events)) {
    const first = body.events[0];
    const last = body.events.at(-1);
    io.out(`  thread      ${String(body.threadId)}`);
    io.out(`  events      ${body.events.length}`);
    if (first) io.out(`  first       ${first.timestamp}  ${first.type}`);
    if (last) io.out(`  last        ${last.timestamp}  ${last.type}`);
    if (body.chain) io.out(`  chain head  ${String(body.chain.head)}`);
  }
  if (result.log) {
    io.out(`  tree        ${result.log.treeSize} events, root ${result.log.rootHash}`);
    const previous = result.log.previous;
    if (previous) {
      io.out(
        `  previous    head at ${previous.treeSize} events (${previous.timestamp}): ${previous.consistent ? 'extended consistently' : 'NOT extended consistently'}`,
      );
    }
  }
  for (const entry of since) {
    const check = entry.check;
    const what = check ? `${check.kind} at ${check.treeSize} events (${check.timestamp}): ` : '';
    io.out(
      entry.valid
        ? `  since       ${entry.label}: ${what}consistent (proof of ${check?.proofLength ?? 0} hashes)`
        : `  since       ${entry.label}: ${what}INCONSISTENT: ${entry.reasons.join('; ')}`,
    );
  }
  for (const check of result.decisions) {
    const who = check.approverName ? `${check.approver} (${check.approverName})` : check.approver;
    const how =
      check.status === 'unverified'
        ? 'UNVERIFIED: bare name, development mode'
        : check.status === 'invalid'
          ? `INVALID: ${check.problem}`
          : `${check.method === 'webauthn' ? `passkey ${check.keyId} at ${check.origin}` : `signed ${check.keyId}`}${check.keyTrusted ? ', key trusted' : ', key not checked against --approvers'}`;
    const tool = check.toolName ? `${check.toolName} ` : '';
    io.out(
      `  decision    ${check.decision} ${tool}${check.approvalId} by ${who}: ${how}; proposal ${check.proposalHash ?? '?'}`,
    );
  }
  for (const change of directory) io.out(`  directory   ${change.description}`);
  if (history && history.changes.length > 0) {
    const added = new Set(
      history.changes.filter((change) => change.change === 'key_added').map((c) => c.keyId),
    );
    for (const keyId of decisionKeys) {
      if (!added.has(keyId)) {
        io.out(`  directory   key ${keyId}: no recorded directory change adds it`);
      }
    }
  }
  const unverified = result.decisions.filter((check) => check.status === 'unverified').length;
  if (unverified > 0) {
    io.out(
      `  warning     ${unverified} decision(s) were taken in the unverified development mode: nobody proved who made them${values['allow-unverified'] ? ' (accepted: --allow-unverified)' : ''}`,
    );
  }
  if (!approvers && result.decisions.some((check) => check.status === 'valid')) {
    io.out(
      values['trust-bundle-keys']
        ? '  warning     decision keys were checked against the keys in the bundle only, and counted (--trust-bundle-keys): whoever holds the evidence key could have minted them'
        : '  note        decision keys were checked against the keys in the bundle only and count for no approval; pass --approvers approvers.json to check them against the approvers you trust',
    );
  }
  for (const reason of [...result.reasons, ...directoryProblems]) {
    io.out(`  reason      ${reason}`);
  }
  return valid ? EXIT.ok : EXIT.failed;
}

function readBundleFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code}`);
  }
}

/** Largest bundle fetched (bytes): a hostile server must not exhaust the auditor's memory. */
const MAX_FETCHED_BUNDLE = 64 * 1024 * 1024;

/**
 * Fetches a bundle over HTTP(S): 60 s at most, 64 MiB at most, no redirects (the URL given is
 * the one checked), `$VERIDEX_INBOX_TOKEN` as Bearer token when set. What comes back is only a
 * claim: it is verified like a file.
 */
async function fetchBundle(url: string): Promise<string> {
  const token = process.env.VERIDEX_INBOX_TOKEN;
  let response: Response;
  try {
    response = await fetch(url, {
      redirect: 'error',
      signal: AbortSignal.timeout(60_000),
      headers: {
        accept: 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
    });
  } catch (error) {
    throw new VeridexError(
      'input_invalid',
      `cannot fetch ${safeUrl(url)}: ${(error as Error).message}`,
    );
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new VeridexError(
      'input_invalid',
      `${safeUrl(url)} answered ${response.status}${response.status === 401 ? ' (set VERIDEX_INBOX_TOKEN to a session token)' : ''}`,
    );
  }
  const reader = response.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const next = await reader?.read();
    if (!next || next.done) break;
    size += next.value.byteLength;
    if (size > MAX_FETCHED_BUNDLE) {
      await reader?.cancel();
      throw new VeridexError('input_invalid', `${safeUrl(url)} sent more than 64 MiB`);
    }
    chunks.push(next.value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The URL without credentials or query, for messages. */
function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return 'the URL';
  }
}
