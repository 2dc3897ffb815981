import { describe, expect, it } from 'vitest';
import { checkWebAuthnAssertion } from '../../src/audit/webauthn-assertion.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';

const INBOX = 'https://inbox.corp.example';

function enrolled() {
  const device = new SoftAuthenticator(INBOX);
  device.register({
    challenge: 'cmVnaXN0ZXI',
    rp: { id: 'inbox.corp.example', name: 'inbox' },
    user: { id: 'dXNlcg', name: 'pat', displayName: 'Pat' },
    pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
  });
  return device;
}

describe('checkWebAuthnAssertion binds an assertion to the origins a passkey may decide on', () => {
  const challenge = 'Y2hhbGxlbmdlLW9mLWEtc3RhdGVtZW50';
  const expectation = (device: SoftAuthenticator, origins?: string[]) => ({
    publicKey: Buffer.from(device.credentials[0]!.cose).toString('base64'),
    rpId: 'inbox.corp.example',
    challenge,
    ...(origins ? { origins } : {}),
  });
  const assertion = (
    device: SoftAuthenticator,
    overrides: { origin?: string; topOrigin?: string } = {},
  ) => {
    const { response } = device.assert({ challenge }, overrides);
    return {
      authenticatorData: response.authenticatorData,
      clientDataJSON: response.clientDataJSON,
      signature: response.signature,
    };
  };

  it('accepts an assertion made on one of the origins, and reports it', () => {
    const device = enrolled();
    const check = checkWebAuthnAssertion(assertion(device), expectation(device, [INBOX]));
    expect(check).toMatchObject({ ok: true, origin: INBOX });
  });

  it('refuses one made on another origin of the same host (another port, or http)', () => {
    const device = enrolled();
    for (const origin of ['https://inbox.corp.example:8443', 'http://inbox.corp.example']) {
      const check = checkWebAuthnAssertion(
        assertion(device, { origin }),
        expectation(device, [INBOX]),
      );
      expect(check.ok).toBe(false);
      expect(!check.ok && check.problem).toMatch(/made on .*, not on https:\/\/inbox/);
    }
  });

  it('refuses one made in a frame another site embedded, even on the right origin', () => {
    const device = enrolled();
    const framed = assertion(device, { topOrigin: 'https://evil.example' });
    for (const origins of [[INBOX], undefined]) {
      const check = checkWebAuthnAssertion(framed, expectation(device, origins));
      expect(check.ok).toBe(false);
      expect(!check.ok && check.problem).toMatch(/frame embedded by another site/);
    }
  });
});
