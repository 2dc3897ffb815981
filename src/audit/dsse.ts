/**
 * DSSE (Dead Simple Signing Envelope, secure-systems-lab/dsse v1) helpers. The signature
 * covers the pre-authentication encoding, so the payload type cannot be swapped without
 * breaking it, and the payload bytes are signed exactly as transmitted (no re-serialisation).
 */

/** A DSSE envelope: base64 payload plus one or more signatures over its PAE. */
export interface DsseEnvelope {
  payloadType: string;
  /** Standard base64 (with padding) of the payload bytes. */
  payload: string;
  signatures: Array<{ keyid: string; sig: string }>;
}

const encoder = new TextEncoder();

/**
 * PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, where LEN is the
 * ASCII decimal byte length.
 */
export function preAuthEncoding(payloadType: string, payload: Uint8Array): Uint8Array {
  const type = encoder.encode(payloadType);
  const header = encoder.encode(`DSSEv1 ${type.length} ${payloadType} ${payload.length} `);
  const result = new Uint8Array(header.length + payload.length);
  result.set(header, 0);
  result.set(payload, header.length);
  return result;
}

/**
 * Decodes standard base64, refusing any text that is not the canonical encoding of its bytes.
 * Node's decoder silently ignores stray characters and padding bits; accepting those would let
 * a changed byte in a bundle go unnoticed.
 */
export function decodeBase64Strict(text: string): Uint8Array | undefined {
  if (typeof text !== 'string' || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
    return undefined;
  }
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? new Uint8Array(bytes) : undefined;
}

/** Standard base64 with padding. */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
