/** What a screening found for one counterparty. */
export type ScreeningResult =
  | { status: 'clear'; source: string }
  | {
      status: 'hit';
      source: string;
      /** The list entry that matched (normalised). */
      matched: string;
      /** Why it matched, for the audit log and the model (e.g. `address on OFAC SDN list`). */
      reason: string;
    };

/**
 * Screens a counterparty (address, account id or name) against sanctions data. The kit
 * calls it twice per transfer: in the policy rules before any approval is requested, and in
 * the transfer pipeline right before execution (lists change while approvals wait).
 * Implementations must fail (throw) rather than answer `clear` when their data is unavailable.
 */
export interface SanctionsScreener {
  screen(counterparty: string): Promise<ScreeningResult>;
}

/**
 * Clears every counterparty. For tests, and for deployments whose payment rail screens
 * (say so in your compliance documentation: the evidence bundle records `source: 'noop'`).
 *
 * @example createTreasuryKit({ ..., sanctions: new NoopSanctionsScreener() })
 */
export class NoopSanctionsScreener implements SanctionsScreener {
  async screen(): Promise<ScreeningResult> {
    return { status: 'clear', source: 'noop' };
  }
}
