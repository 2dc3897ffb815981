import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { canonicalJson } from './canonical-json.js';
import { type HeadWitness, submissionProblem, witnessRefusal } from './head-witness.js';
import type { EvidenceVerifier } from './signer.js';
import { checkTreeHead, headLog, type SignedTreeHead } from './tree-head.js';

/** One line of a head file: its 1-based line number and what it holds (parsed JSON, unchecked). */
export interface HeadFileEntry {
  line: number;
  value: unknown;
}

/**
 * Reads a head file (JSON lines, one signed tree head per line; blank lines skipped). Lines that
 * are not JSON come back as `undefined` values so that a verifier reports them by line number.
 * @throws Error (with the `code` of node:fs) when the file cannot be read.
 */
export function readHeadFile(path: string): HeadFileEntry[] {
  const entries: HeadFileEntry[] = [];
  const lines = readFileSync(path, 'utf8').split('\n');
  for (let index = 0; index < lines.length; index++) {
    const text = lines[index]!.trim();
    if (text === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    entries.push({ line: index + 1, value });
  }
  return entries;
}

/** Options for {@link FileHeadWitness}. */
export interface FileHeadWitnessOptions {
  /** Accept only heads signed by one of these keys (default: any well-formed head). */
  keys?: readonly EvidenceVerifier[];
}

/**
 * An append-only head file: one signed tree head per line (canonical JSON), appended with
 * O_APPEND. The file is only as safe as where it goes next — ship it off the database host
 * (`tail -F` to a log service, object storage with a retention lock, a git repository others
 * clone, another organisation); `veridex audit verify --witness heads.jsonl` checks a database
 * against every line. Appending, it checks each head against the file's last head of the same
 * log, so a rewritten log is refused here already.
 *
 * @example
 * const audit = new AuditLog({ store: new PostgresAuditStore(db), witnesses: [new FileHeadWitness('/var/log/veridex/heads.jsonl')] });
 */
export class FileHeadWitness implements HeadWitness {
  readonly name: string;
  readonly #path: string;
  readonly #keys: readonly EvidenceVerifier[] | undefined;

  constructor(path: string, options: FileHeadWitnessOptions = {}) {
    this.#path = path;
    this.name = path;
    this.#keys = options.keys;
  }

  async latest(log: string): Promise<SignedTreeHead | undefined> {
    return (await this.heads()).findLast((head) => headLog(head) === log);
  }

  async submit(head: SignedTreeHead, consistency: readonly string[]): Promise<void> {
    const why = submissionProblem(await this.latest(headLog(head)), head, consistency, this.#keys);
    if (why) throw witnessRefusal(this.name, head, why);
    mkdirSync(dirname(this.#path), { recursive: true });
    appendFileSync(this.#path, `${canonicalJson(head)}\n`, { flag: 'a', mode: 0o644 });
  }

  /** The well-formed heads of the file, in order (malformed lines are left to `readHeadFile`'s callers). */
  async heads(): Promise<SignedTreeHead[]> {
    if (!existsSync(this.#path)) return [];
    return readHeadFile(this.#path)
      .map((entry) => checkTreeHead(entry.value, []).head)
      .filter((head): head is SignedTreeHead => head !== undefined);
  }
}
