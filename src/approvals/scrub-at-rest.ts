import { type ScrubReport, SecretFingerprintStore, SecretScrubber } from '../audit/index.js';
import type { Database } from '../db/index.js';
import { VeridexError } from '../errors/index.js';
import type { ApprovalRequest } from './types.js';

/**
 * What the approvals table may keep: text and values with every registered secret and pasted
 * credential removed — including secrets registered by another process, whose fingerprints are
 * loaded from the database before each scrub (README, Secrets). A process whose first act is
 * to decide an approval (the CLI, the inbox) has loaded none yet; scrubbing before the load
 * would store the secret in clear while the audit copy, scrubbed later, was clean.
 */
export class AtRestScrubber {
  readonly #scrubber: SecretScrubber;

  /**
   * @param scrubber the audit log's scrubber when there is one (it knows this process's secrets);
   * @param db else the database whose shared fingerprints a fresh scrubber loads.
   */
  constructor(scrubber: SecretScrubber | undefined, db: Database | undefined) {
    if (scrubber) {
      this.#scrubber = scrubber;
    } else {
      this.#scrubber = new SecretScrubber();
      if (db) this.#scrubber.attach(SecretFingerprintStore.for(db));
    }
  }

  /** The scrubber with the shared fingerprints loaded as of now (one query when attached). */
  async ready(): Promise<SecretScrubber> {
    if (this.#scrubber.shared) await this.#scrubber.refresh();
    return this.#scrubber;
  }

  /** `request` as it may be stored: summary, proposal envelope and reason scrubbed. */
  async request(request: ApprovalRequest): Promise<ApprovalRequest> {
    const scrubber = await this.ready();
    return {
      ...request,
      summary: scrubber.scrub(request.summary) as Record<string, unknown>,
      proposal: scrubber.scrub(request.proposal) as Record<string, unknown>,
      reason: scrubber.scrubText(request.reason),
    };
  }
}

/**
 * Refuses edited arguments that carry a registered secret. They are stored with the decision
 * and executed from there on resume, so they can be neither kept in clear nor scrubbed (the
 * tool would run with a placeholder): the approver references the secret instead.
 *
 * @throws VeridexError `resume_payload_invalid` naming the secrets (never their values).
 */
export function refuseSecretsInEdit(
  editedArgs: Record<string, unknown>,
  scrubber: SecretScrubber,
): void {
  const report: ScrubReport = { secrets: [], credentials: [] };
  scrubber.scrub(editedArgs, report);
  if (report.secrets.length === 0) return;
  const names = [...new Set(report.secrets)].join(', ');
  throw new VeridexError(
    'resume_payload_invalid',
    `The edited arguments contain the registered secret ${names}: an edit is stored with the approval and may not carry a secret value. Pass a reference to the secret instead (see README, Secrets).`,
    { details: { secrets: [...new Set(report.secrets)] } },
  );
}
