import type { CREDENTIAL_FORMATS } from './credential-formats.js';

/**
 * A kind of credential the redactor recognises, named in `[REDACTED:<kind>]` markers and
 * security events: the kinds of the rows of the one table of formats (credential-formats.ts).
 */
export type CredentialKind = (typeof CREDENTIAL_FORMATS)[number]['kind'];

/** One stretch of text to replace by `[REDACTED:<kind>]`. */
export interface CredentialSpan {
  start: number;
  end: number;
  kind: CredentialKind;
  /** Breaks ties between spans that start together: lower wins (more specific). */
  rank: number;
}
