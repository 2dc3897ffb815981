// Helpers for tests of the approvals service: a running server over a test database with the
// test approvers registered, sign-in with their Ed25519 keys, and an SSE reader over fetch.
import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog, PostgresAuditStore } from '../../src/audit/index.js';
import type { Database } from '../../src/db/index.js';
import { PostgresApproverDirectory } from '../../src/identity/index.js';
import {
  type RunningApprovalsServer,
  type StartApprovalsServerOptions,
  signLogin,
  startApprovalsServer,
} from '../../src/server/index.js';
import { testApproverInits, testKey } from './approvers.js';

/** A test clock: starts at the real time, moves only when told. */
export function testClock(): { now: () => Date; advance(ms: number): void } {
  let time = Date.now();
  return {
    now: () => new Date(time),
    advance: (ms) => {
      time += ms;
    },
  };
}

/** What {@link startTestInbox} returns. */
export interface TestInbox {
  server: RunningApprovalsServer;
  manager: ApprovalManager;
  audit: AuditLog;
  directory: PostgresApproverDirectory;
  /** `fetch` against the server with a path. */
  call(path: string, init?: RequestInit & { token?: string }): Promise<Response>;
  /** Signs in as a test approver with their Ed25519 key; returns the Bearer token and CSRF token. */
  login(name: string): Promise<{ token: string; csrfToken: string; cookie: string }>;
  close(): Promise<void>;
}

/**
 * Registers the test approvers (carol operates the agent) in `db`'s directory and starts the
 * service on a free port of 127.0.0.1.
 */
export async function startTestInbox(
  db: Database,
  options: Partial<StartApprovalsServerOptions> & { defaultTimeoutMs?: number } = {},
): Promise<TestInbox> {
  const now = options.now ?? (() => new Date());
  const directory = new PostgresApproverDirectory(db, { now });
  for (const init of testApproverInits(['alice', 'bob', 'carol', 'mallory'], {
    alice: ['admin'],
  })) {
    await directory.add(init);
  }
  const audit = new AuditLog({ store: new PostgresAuditStore(db), now });
  const manager = new ApprovalManager({
    db,
    audit,
    approvers: directory,
    operators: ['carol'],
    now,
    ...(options.defaultTimeoutMs !== undefined
      ? { defaultTimeoutMs: options.defaultTimeoutMs }
      : {}),
  });
  const server = await startApprovalsServer({
    db,
    port: 0,
    approvals: manager,
    audit,
    pollIntervalMs: 50,
    ...options,
  });
  const call = (path: string, init: RequestInit & { token?: string } = {}) => {
    const { token, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (token) headers.set('authorization', `Bearer ${token}`);
    if (rest.body !== undefined && !headers.has('content-type')) {
      headers.set('content-type', 'application/json');
    }
    return fetch(`${server.url}${path}`, { ...rest, headers });
  };
  const login = async (name: string) => {
    const challenge = (await (await call('/api/auth/challenge', { method: 'POST' })).json()) as {
      challenge: string;
      audience: string;
    };
    const signed = signLogin({ approver: name, ...challenge }, testKey(name));
    const response = await call('/api/auth/key', { method: 'POST', body: JSON.stringify(signed) });
    if (response.status !== 200) throw new Error(`login ${name}: ${await response.text()}`);
    const body = (await response.json()) as { token: string; csrfToken: string };
    const cookie = response.headers.get('set-cookie') ?? '';
    return { ...body, cookie };
  };
  return {
    server,
    manager,
    audit,
    directory,
    call,
    login,
    close: () => server.close(),
  };
}

/** One Server-Sent Event as received. */
export interface ReceivedEvent {
  id?: string;
  event: string;
  data: string;
}

/**
 * Reads an SSE stream over fetch (Node has no EventSource): collects events as they arrive and
 * lets a test wait for one that matches.
 */
export async function openEventStream(
  url: string,
  token: string,
): Promise<{
  events: ReceivedEvent[];
  next(match: (event: ReceivedEvent) => boolean, timeoutMs?: number): Promise<ReceivedEvent>;
  close(): void;
  /** Resolves when the server ends the stream (or it is aborted). */
  ended: Promise<void>;
}> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  if (response.status !== 200) throw new Error(`SSE ${response.status}: ${await response.text()}`);
  const events: ReceivedEvent[] = [];
  const waiters = new Set<() => void>();
  const ended = (async () => {
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end = buffer.indexOf('\n\n');
        while (end !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event: ReceivedEvent = { event: 'message', data: '' };
          for (const line of block.split('\n')) {
            if (line.startsWith('id:')) event.id = line.slice(3).trim();
            else if (line.startsWith('event:')) event.event = line.slice(6).trim();
            else if (line.startsWith('data:')) event.data += line.slice(5).trim();
          }
          if (event.data || event.event !== 'message') events.push(event);
          for (const wake of waiters) wake();
          end = buffer.indexOf('\n\n');
        }
      }
    } catch {
      // aborted
    }
  })();
  const next = (match: (event: ReceivedEvent) => boolean, timeoutMs = 20_000) =>
    new Promise<ReceivedEvent>((resolve, reject) => {
      const check = () => {
        const found = events.find(match);
        if (found) {
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(
          new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(events)}`),
        );
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  return { events, next, close: () => controller.abort(), ended };
}

/** A browser's inbox session: its cookie and CSRF token (what a sign-in or enrolment returns). */
export interface BrowserSession {
  cookie: string;
  csrfToken: string;
}

/**
 * POSTs `body` as JSON to the inbox: as a browser holding `browser`'s session (cookie, CSRF
 * token, the inbox's own origin), with a bearer `token`, or with neither.
 */
export function postToInbox(
  inbox: TestInbox,
  path: string,
  body: unknown,
  browser?: BrowserSession,
  token?: string,
): Promise<Response> {
  return inbox.call(path, {
    method: 'POST',
    body: JSON.stringify(body),
    ...(token ? { token } : {}),
    headers: browser
      ? { cookie: browser.cookie, 'x-csrf-token': browser.csrfToken, origin: inbox.server.origin }
      : {},
  });
}
