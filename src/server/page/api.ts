// The page's calls to the service: same origin, session cookie, CSRF token on every POST.

let csrfToken = '';

/** Remembers the CSRF token of the current session (from sign-in or GET /api/session). */
export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** An error answer of the API, with its stable code. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

async function parse<T>(response: Response): Promise<T> {
  const body = (await response.json().catch(() => ({}))) as {
    error?: { code: string; message: string };
  };
  if (!response.ok) {
    throw new ApiError(
      body.error?.code ?? 'http_error',
      body.error?.message ?? `HTTP ${response.status}`,
      response.status,
    );
  }
  return body as T;
}

/** GET a JSON resource. */
export async function get<T>(path: string): Promise<T> {
  return parse<T>(await fetch(path, { credentials: 'same-origin' }));
}

/** POST JSON with the CSRF token. */
export async function post<T>(path: string, body: unknown = {}): Promise<T> {
  return parse<T>(
    await fetch(path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken },
      body: JSON.stringify(body),
    }),
  );
}

export interface SessionInfo {
  approver: { id: string; displayName: string; roles: string[] };
  method: string;
  expiresAt: string;
  csrfToken: string;
}

export interface DecisionView {
  approver: string;
  approverName?: string;
  decision: string;
  reason?: string;
  editedArgs?: Record<string, unknown>;
  decidedAt: string;
  method?: string;
}

export interface Approval {
  id: string;
  threadId: string;
  status: string;
  route: string;
  rule: { id: string; name: string };
  reason: string;
  proposalHash: string;
  proposal: { toolName?: string; arguments?: Record<string, unknown> } & Record<string, unknown>;
  toolName?: string;
  highlights: { amount?: string; currency?: string; recipient?: string; memo?: string };
  proposer: string;
  quorum: { required: number; approvals: number; tier: { name: string } };
  decisions: DecisionView[];
  createdAt: string;
  expiresAt: string;
}

export interface ApprovalDetail extends Approval {
  mayDecide: boolean;
  /** Set once the request resolved: whether the run continued. */
  resumption?: {
    state: 'waiting' | 'resumed' | 'retrying';
    at?: string;
    outcome?: string;
    error?: string;
  };
  trace: Array<{
    eventId: string;
    type: string;
    timestamp: string;
    payload: Record<string, unknown>;
  }>;
  reasoning: Array<{ role: string; content: string; toolCalls?: Array<{ name: string }> }>;
}
