import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  Ed25519Verifier,
  type EvidenceVerifier,
  HmacSigner,
  readPublicKey,
  verifyEvidence,
} from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import { type CliIo, EXIT, UsageError } from './io.js';

export const VERIFY_USAGE = `Usage: veridex verify <bundle.json> --key <public key | key file> [--key ...] [--hmac-secret-env NAME]

Verifies a signed evidence bundle offline. Exit code 0 valid, 1 invalid, 2 usage error.
  --key              Ed25519 public key: a PEM file, or 64 hex digits (repeatable)
  --hmac-secret-env  name of an environment variable holding an HMAC secret (repeatable)
  --json             print the full verification result as JSON`;

/** `veridex verify`: prints a short human summary and returns the exit code. */
export function verifyCommand(argv: string[], io: CliIo): number {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      key: { type: 'string', multiple: true },
      'hmac-secret-env': { type: 'string', multiple: true },
      json: { type: 'boolean' },
    },
  });
  const [file] = positionals;
  if (!file || positionals.length > 1) throw new UsageError('expected exactly one bundle file');
  const keys: EvidenceVerifier[] = [];
  try {
    for (const key of values.key ?? []) keys.push(new Ed25519Verifier(readPublicKey(key)));
    for (const name of values['hmac-secret-env'] ?? []) {
      const secret = process.env[name];
      if (!secret) throw new UsageError(`environment variable ${name} is not set`);
      keys.push(new HmacSigner(secret));
    }
  } catch (error) {
    if (VeridexError.is(error)) throw new UsageError(error.message);
    throw error;
  }
  if (keys.length === 0) throw new UsageError('give at least one --key (or --hmac-secret-env)');

  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code}`);
  }
  let bundle: unknown;
  try {
    bundle = JSON.parse(text);
  } catch {
    bundle = undefined;
  }
  const result =
    bundle === undefined
      ? { valid: false, reasons: ['file is not JSON'], signatures: [], body: undefined }
      : verifyEvidence(bundle, { keys });
  if (values.json) {
    io.out(
      JSON.stringify(
        { valid: result.valid, reasons: result.reasons, signatures: result.signatures },
        null,
        2,
      ),
    );
    return result.valid ? EXIT.ok : EXIT.failed;
  }
  const body = result.body;
  io.out(result.valid ? `VALID   ${file}` : `INVALID ${file}`);
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
  for (const reason of result.reasons) io.out(`  reason      ${reason}`);
  return result.valid ? EXIT.ok : EXIT.failed;
}
