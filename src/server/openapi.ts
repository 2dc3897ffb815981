/**
 * The service's OpenAPI 3.1 document, served at `/api/openapi.json`. Written by hand beside the
 * routes (a test checks it is valid and lists every route the app serves).
 */
export function openApiDocument(origin: string): Record<string, unknown> {
  const error = { $ref: '#/components/responses/Error' };
  const json = (schema: Record<string, unknown>) => ({
    content: { 'application/json': { schema } },
  });
  const ok = (description: string, schema: Record<string, unknown> = { type: 'object' }) => ({
    description,
    ...json(schema),
  });
  const secured = [{ session: [] }, { bearer: [] }];
  const id = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Veridex approvals inbox',
      version: '1',
      description:
        'Approval requests of governed LangGraph runs: list, inspect, decide with signed decisions (Ed25519 approver keys or passkeys), live events over SSE. Every decision is verified against the approver directory and recorded in the thread’s audit log.',
    },
    servers: [{ url: origin }],
    components: {
      securitySchemes: {
        session: { type: 'apiKey', in: 'cookie', name: '__Host-veridex_session' },
        bearer: { type: 'http', scheme: 'bearer' },
      },
      responses: {
        Error: ok('A refusal: a stable code and what to do.', {
          $ref: '#/components/schemas/Error',
        }),
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: { code: { type: 'string' }, message: { type: 'string' } },
            },
          },
        },
        DecisionStatement: {
          type: 'object',
          required: ['approvalId', 'proposalHash', 'decision', 'approver', 'decidedAt', 'nonce'],
          properties: {
            approvalId: { type: 'string' },
            proposalHash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
            decision: { enum: ['approve', 'reject', 'edit'] },
            editedArgumentsHash: { type: 'string' },
            reasonHash: { type: 'string' },
            approver: { type: 'string' },
            decidedAt: { type: 'string', format: 'date-time' },
            nonce: { type: 'string' },
          },
        },
        SignedDecision: {
          type: 'object',
          required: ['statement', 'keyId', 'signature'],
          description:
            'A decision statement signed by an approver key. Ed25519: `signature` over the DSSE PAE of the statement. Passkey: `keyId` `webauthn:…`, `signature` and `webauthn` (the assertion) over the challenge derived from the statement.',
          properties: {
            statement: { $ref: '#/components/schemas/DecisionStatement' },
            keyId: { type: 'string' },
            signature: { type: 'string' },
            webauthn: {
              type: 'object',
              properties: {
                authenticatorData: { type: 'string' },
                clientDataJSON: { type: 'string' },
              },
            },
            reason: { type: 'string' },
            editedArgs: { type: 'object' },
          },
        },
        Approval: {
          type: 'object',
          required: ['id', 'threadId', 'status', 'route', 'rule', 'proposalHash', 'quorum'],
          properties: {
            id: { type: 'string' },
            threadId: { type: 'string' },
            runId: { type: 'string' },
            status: { enum: ['pending', 'approved', 'rejected', 'edited', 'expired'] },
            route: { type: 'string' },
            rule: { type: 'object' },
            reason: { type: 'string' },
            proposalHash: { type: 'string' },
            proposalBinding: {
              enum: ['hash', 'redacted', 'none'],
              description:
                'How `proposal` is bound to `proposalHash` (what approvers sign): `redacted` means secrets were scrubbed from it at rest and it is the form the audit log recorded; `none` means the stored proposal was edited, nothing of it is shown and it cannot be decided here (`proposal_tampered`)',
            },
            proposalProblem: { type: 'string' },
            proposal: {
              type: 'object',
              description: 'Exactly the fields the proposal hash covers',
            },
            toolName: { type: 'string' },
            highlights: { type: 'object' },
            quorum: { type: 'object' },
            decisions: { type: 'array', items: { type: 'object' } },
            expiresAt: { type: 'string', format: 'date-time' },
          },
        },
      },
    },
    paths: {
      '/api/openapi.json': {
        get: { summary: 'This document', responses: { '200': ok('OpenAPI 3.1') } },
      },
      '/api/health': { get: { summary: 'Liveness', responses: { '200': ok('Up') } } },
      '/api/auth/challenge': {
        post: {
          summary: 'A one-time sign-in challenge for an approver key',
          responses: { '200': ok('challenge, audience, expiresAt') },
        },
      },
      '/api/auth/key': {
        post: {
          summary: 'Sign in with an Ed25519 approver key (signLogin)',
          requestBody: json({ type: 'object' }),
          responses: { '200': ok('Session token (Bearer), CSRF token, approver'), '401': error },
        },
      },
      '/api/auth/logout': {
        post: { summary: 'Sign out', security: secured, responses: { '200': ok('Signed out') } },
      },
      '/api/session': {
        get: {
          summary: 'The signed-in approver and the CSRF token for cookie sessions',
          security: secured,
          responses: { '200': ok('Session'), '401': error },
        },
      },
      '/api/approvals': {
        get: {
          summary: 'Approval requests, newest first',
          security: secured,
          parameters: [
            {
              name: 'status',
              in: 'query',
              schema: { enum: ['pending', 'approved', 'rejected', 'edited', 'expired', 'all'] },
            },
            { name: 'thread', in: 'query', schema: { type: 'string' } },
            {
              name: 'scope',
              in: 'query',
              schema: { enum: ['all', 'mine'] },
              description: '`mine`: pending requests the signed-in approver may decide now',
            },
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } },
            { name: 'cursor', in: 'query', schema: { type: 'string' } },
          ],
          responses: {
            '200': ok('A page', {
              type: 'object',
              properties: {
                items: { type: 'array', items: { $ref: '#/components/schemas/Approval' } },
                nextCursor: { type: ['string', 'null'] },
              },
            }),
            '401': error,
          },
        },
      },
      '/api/approvals/{id}': {
        get: {
          summary:
            'One request: proposal, rule, quorum, decisions, expiry, the trace up to it and the reasoning (the last messages before it, sanitised); once resolved, `resumption` (waiting for a resumer, resumed at, retrying); redacted',
          security: secured,
          parameters: [id],
          responses: {
            '200': ok('The request', { $ref: '#/components/schemas/Approval' }),
            '404': error,
            '409': error,
          },
        },
      },
      '/api/approvals/{id}/decisions': {
        post: {
          summary: 'Post a signed decision (approve, reject or edit, with reason)',
          security: secured,
          parameters: [
            id,
            {
              name: 'X-CSRF-Token',
              in: 'header',
              schema: { type: 'string' },
              description: 'Required with cookie sessions',
            },
          ],
          requestBody: json({ $ref: '#/components/schemas/SignedDecision' }),
          responses: {
            '200': ok('The request after the decision', { $ref: '#/components/schemas/Approval' }),
            '400': error,
            '401': error,
            '403': error,
            '404': error,
            '409': error,
            '410': error,
          },
        },
      },
      '/api/approvals/{id}/passkey-challenge': {
        post: {
          summary:
            'Prepare a passkey decision: the statement (current proposal hash, decision, reason and edit hashes, time, nonce) and WebAuthn request options whose challenge is derived from it',
          security: secured,
          parameters: [id],
          requestBody: json({
            type: 'object',
            required: ['decision'],
            properties: {
              decision: { enum: ['approve', 'reject', 'edit'] },
              reason: { type: 'string' },
              editedArgs: { type: 'object' },
            },
          }),
          responses: {
            '200': ok('statement, challenge, options'),
            '401': error,
            '404': error,
            '409': error,
          },
        },
      },
      '/api/passkeys/register/options': {
        post: {
          summary: 'WebAuthn registration options for the approver a one-time invitation is for',
          requestBody: json({ type: 'object', properties: { invitation: { type: 'string' } } }),
          responses: { '200': ok('PublicKeyCredentialCreationOptionsJSON'), '410': error },
        },
      },
      '/api/passkeys/register': {
        post: {
          summary:
            'Register the passkey (adds it to the approver directory; uses the invitation; signs in)',
          requestBody: json({
            type: 'object',
            properties: {
              invitation: { type: 'string' },
              response: { type: 'object' },
              proof: { type: 'object' },
            },
          }),
          responses: {
            '200': ok('approver, keyId, csrfToken'),
            '401': error,
            '403': error,
            '409': error,
            '410': error,
          },
        },
      },
      '/api/passkeys/register/proof-challenge': {
        post: {
          summary:
            'For an approver who already holds a key: the enrolment statement to sign with one of them',
          requestBody: json({
            type: 'object',
            properties: { invitation: { type: 'string' }, credentialId: { type: 'string' } },
          }),
          responses: { '200': ok('statement, options'), '403': error, '410': error },
        },
      },
      '/api/passkeys/login/options': {
        post: {
          summary: 'WebAuthn sign-in options',
          responses: { '200': ok('PublicKeyCredentialRequestOptionsJSON') },
        },
      },
      '/api/passkeys/login': {
        post: {
          summary: 'Sign in with a passkey (sets the session cookie)',
          requestBody: json({ type: 'object', properties: { response: { type: 'object' } } }),
          responses: { '200': ok('approver, csrfToken'), '401': error, '409': error },
        },
      },
      '/api/webhooks/deliveries': {
        get: {
          summary: 'The webhook delivery log, newest first (admins only)',
          security: secured,
          parameters: [
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 500 } },
          ],
          responses: { '200': ok('items'), '403': error },
        },
      },
      '/api/invitations': {
        post: {
          summary: 'Invite an approver to enrol a passkey (admins only): a one-time link',
          security: secured,
          requestBody: json({
            type: 'object',
            properties: {
              approver: { type: 'string' },
              displayName: { type: 'string' },
            },
          }),
          responses: { '200': ok('approver, link, expiresAt'), '403': error },
        },
      },
      '/api/threads/{id}/events': {
        get: {
          summary: 'A thread’s audit trail, oldest first',
          security: secured,
          parameters: [
            id,
            { name: 'after', in: 'query', schema: { type: 'integer', minimum: 0 } },
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } },
          ],
          responses: { '200': ok('A page of events'), '404': error },
        },
      },
      '/api/threads/{id}/run': {
        get: {
          summary: 'The run behind a thread: status, pending approvals, last messages (sanitised)',
          security: secured,
          parameters: [id],
          responses: { '200': ok('status, pendingApprovals, lastMessages'), '401': error },
        },
      },
      '/api/threads/{id}/evidence': {
        get: {
          summary:
            'The thread’s latest sealed evidence bundle (DSSE), as stored; verify it with `veridex verify <URL>`',
          security: secured,
          parameters: [id],
          responses: { '200': ok('The evidence bundle'), '401': error, '404': error },
        },
      },
      '/api/events': {
        get: {
          summary:
            'Live events (Server-Sent Events): approval_requested, approval_decided, approval_expired',
          security: secured,
          responses: {
            '200': {
              description: 'An event stream',
              content: { 'text/event-stream': { schema: { type: 'string' } } },
            },
          },
        },
      },
    },
  };
}
