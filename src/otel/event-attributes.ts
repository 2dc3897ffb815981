import type { Attributes } from '@opentelemetry/api';
import { redactCredentials, type TraceEvent } from '../audit/index.js';

/**
 * Payload fields that may become span attributes by default: decisions and outcomes, never
 * arguments, results, identities or free text. Each becomes `veridex.<field>` (snake case).
 */
const SAFE_FIELDS = [
  'toolName',
  'safetyClass',
  'verdict',
  'route',
  'ruleId',
  'requiredApprovals',
  'decision',
  'status',
  'kind',
  'code',
  'via',
  'attempts',
  'replayed',
  'trust',
  'interruptIndex',
] as const;

/** Longest opt-in attribute value (arguments), in characters. */
export const MAX_ATTRIBUTE_LENGTH = 4096;

/** The default, safe attributes of an audit event: `veridex.event.type` and the fields above. */
export function safeAttributes(event: TraceEvent): Attributes {
  const attributes: Attributes = { 'veridex.event.type': event.type };
  for (const field of SAFE_FIELDS) {
    const value = event.payload[field];
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      attributes[`veridex.${snake(field)}`] = value;
    }
  }
  return attributes;
}

/**
 * An opt-in value (tool arguments, approver identities) as an attribute: JSON, credential-shaped
 * strings redacted, capped. Audit payloads were already scrubbed of registered secrets when
 * they were appended; this pass catches credentials nobody registered.
 */
export function scrubbedValue(value: unknown): string {
  const text = redactCredentials(
    typeof value === 'string' ? value : (JSON.stringify(value) ?? ''),
  ).text;
  return text.length <= MAX_ATTRIBUTE_LENGTH ? text : `${text.slice(0, MAX_ATTRIBUTE_LENGTH - 1)}…`;
}

function snake(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}
