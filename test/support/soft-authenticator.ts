// A software WebAuthn authenticator for API tests: the one documented double at this edge (the
// hardware). It makes real P-256 keys, 'none' attestations and real ECDSA assertions in the
// formats browsers report, so the service's real @simplewebauthn/server verification runs on
// them. Browser tests use Chromium's CDP virtual authenticator instead.
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { type CBORType, encodeCBOR } from '@levischuck/tiny-cbor';

interface Credential {
  id: string;
  privateKey: KeyObject;
  cose: Uint8Array;
  userHandle: string;
  counter: number;
}

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

/** Options as the service returns them (the JSON forms of WebAuthn's creation/request options). */
interface CreationOptions {
  challenge: string;
  rp: { id?: string };
  user: { id: string };
}
interface RequestOptions {
  challenge: string;
  allowCredentials?: Array<{ id: string }>;
}

export class SoftAuthenticator {
  readonly credentials: Credential[] = [];
  /** Flags of the next responses: user present (0x01) and verified (0x04) unless changed. */
  flags = 0x05;

  constructor(
    readonly origin: string,
    readonly rpId: string = new URL(origin).hostname,
  ) {}

  /** `navigator.credentials.create` → RegistrationResponseJSON. */
  register(input: unknown): Record<string, unknown> {
    const options = input as CreationOptions;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const cose = encodeCBOR(
      new Map<number, Uint8Array | number>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    const id = randomBytes(16);
    const credential: Credential = {
      id: b64url(id),
      privateKey,
      cose,
      userHandle: options.user.id,
      counter: 0,
    };
    this.credentials.push(credential);
    const length = Buffer.alloc(2);
    length.writeUInt16BE(id.length);
    const authData = Buffer.concat([
      sha256(options.rp.id ?? this.rpId),
      Buffer.from([this.flags | 0x40]),
      Buffer.alloc(4),
      Buffer.alloc(16),
      length,
      id,
      cose,
    ]);
    const clientDataJSON = JSON.stringify({
      type: 'webauthn.create',
      challenge: options.challenge,
      origin: this.origin,
      crossOrigin: false,
    });
    const attestationObject = encodeCBOR(
      new Map<string, CBORType>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    );
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
        publicKeyAlgorithm: -7,
      },
    };
  }

  /** `navigator.credentials.get` → AuthenticationResponseJSON (with the first allowed credential). */
  assert(
    input: unknown,
    overrides: {
      origin?: string;
      rpId?: string;
      counter?: number;
      /** Made in a frame another site embedded: `crossOrigin: true` and that site's `topOrigin`. */
      topOrigin?: string;
    } = {},
  ): {
    id: string;
    rawId: string;
    type: string;
    clientExtensionResults: object;
    response: {
      authenticatorData: string;
      clientDataJSON: string;
      signature: string;
      userHandle: string;
    };
  } {
    const options = input as RequestOptions;
    const allowed = options.allowCredentials?.map((entry) => entry.id);
    const credential = this.credentials.find((c) => !allowed?.length || allowed.includes(c.id));
    if (!credential) throw new Error('no credential for these options');
    credential.counter = overrides.counter ?? credential.counter + 1;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(credential.counter);
    const authenticatorData = Buffer.concat([
      sha256(overrides.rpId ?? this.rpId),
      Buffer.from([this.flags]),
      counter,
    ]);
    const clientDataJSON = Buffer.from(
      JSON.stringify({
        type: 'webauthn.get',
        challenge: options.challenge,
        origin: overrides.origin ?? this.origin,
        crossOrigin: overrides.topOrigin !== undefined,
        ...(overrides.topOrigin !== undefined ? { topOrigin: overrides.topOrigin } : {}),
      }),
    );
    const signature = sign(
      'sha256',
      Buffer.concat([authenticatorData, sha256(clientDataJSON)]),
      credential.privateKey,
    );
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      clientExtensionResults: {},
      response: {
        authenticatorData: b64url(authenticatorData),
        clientDataJSON: b64url(clientDataJSON),
        signature: b64url(signature),
        userHandle: credential.userHandle,
      },
    };
  }
}
