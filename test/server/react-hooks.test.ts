// The React hooks against the real service on 127.0.0.1, in the same process. React renders
// into a happy-dom document installed as `window`/`document` only: vitest's happy-dom
// environment would also replace Node's URL and fetch, which the server needs.
import { Window } from 'happy-dom';
import { createElement, type ReactNode } from 'react';
import { afterEach, expect, it } from 'vitest';

const dom = new Window({ url: 'http://localhost/' });
Object.assign(globalThis, {
  window: dom,
  document: dom.document,
  IS_REACT_ACT_ENVIRONMENT: true,
});
if (!('navigator' in globalThis)) Object.assign(globalThis, { navigator: dom.navigator });
const { act, configure, renderHook, waitFor } = await import('@testing-library/react');
// Waiting on conditions, not timing: a loaded 2-core machine may need seconds per request.
configure({ asyncUtilTimeout: 30_000 });

import {
  ApprovalsProvider,
  createApprovalsClient,
  useApprovals,
  useRun,
  useTrace,
} from '../../src/react/index.js';
import { signAs } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { startTestInbox, type TestInbox } from '../support/inbox.js';
import { escalate, transferProposal } from '../support/proposals.js';

describeEachDatabase('React hooks over the approvals service', (context) => {
  let inbox: TestInbox | undefined;
  afterEach(async () => {
    await inbox?.close();
    inbox = undefined;
  });

  async function wrapperFor(name: string) {
    const { token } = await inbox!.login(name);
    const client = createApprovalsClient({
      baseUrl: inbox!.server.url,
      token,
    });
    return ({ children }: { children?: ReactNode }) =>
      createElement(ApprovalsProvider, { client }, children);
  }

  it('useApprovals lists what bob may decide, decides, and picks up new requests live', {
    timeout: 120_000,
  }, async () => {
    inbox = await startTestInbox(context.db());
    const first = await inbox.manager.request(
      transferProposal('th-hooks', 'call_1'),
      escalate('dual_approval'),
    );
    const wrapper = await wrapperFor('bob');
    const { result, unmount } = renderHook(() => useApprovals({ scope: 'mine' }), { wrapper });
    await waitFor(() => expect(result.current.loading).toBe(false));
    expect(result.current.pending.map((item) => item.id)).toEqual([first.id]);
    expect(result.current.pending[0]!.highlights).toMatchObject({
      amount: '50000.00',
      currency: 'USD',
    });

    // A request opened elsewhere (the graph) shows up without a manual refresh.
    const second = await inbox.manager.request(
      transferProposal('th-hooks', 'call_2'),
      escalate('dual_approval'),
    );
    await waitFor(
      () => expect(result.current.pending.map((item) => item.id)).toContain(second.id),
      {
        timeout: 20_000,
      },
    );

    await act(async () => {
      const after = await result.current.decide(first.id, signAs(first, 'bob'));
      expect(after.quorum.approvals).toBe(1);
    });
    // bob decided it: no longer his to decide.
    await waitFor(() => expect(result.current.pending.map((item) => item.id)).toEqual([second.id]));

    // A refused decision surfaces its code.
    const refused = await result.current
      .decide(second.id, signAs(second, 'alice'))
      .catch((error: { code: string }) => error.code);
    expect(refused).toBe('session_mismatch');
    unmount();
  });

  it('catches up on a decision made before its live stream opened', {
    timeout: 120_000,
  }, async () => {
    inbox = await startTestInbox(context.db());
    const request = await inbox.manager.request(
      transferProposal('th-gap'),
      escalate('human_required'),
    );
    const { token } = await inbox.login('alice');
    let openStream!: () => void;
    const streamMayOpen = new Promise<void>((resolve) => {
      openStream = resolve;
    });
    const client = createApprovalsClient({
      baseUrl: inbox.server.url,
      token,
      // The live stream connects only when the test lets it: the decision falls in the gap
      // between the hook's first read and the server listening for it.
      fetch: async (input, init) => {
        if (String(input).endsWith('/api/events')) await streamMayOpen;
        return fetch(input, init);
      },
    });
    const wrapper = ({ children }: { children?: ReactNode }) =>
      createElement(ApprovalsProvider, { client }, children);
    const trace = renderHook(() => useTrace('th-gap'), { wrapper });
    const types = () => trace.result.current.events.map((event) => event.type);
    await waitFor(() => expect(types()).toEqual(['approval_requested']));
    const announced = new Promise<void>((resolve) => {
      const stop = inbox!.server.inbox.feed.subscribe((event) => {
        if (event.type !== 'approval_decided') return;
        stop();
        resolve();
      });
    });
    await inbox.manager.decide(request.id, signAs(request, 'bob'));
    await announced; // the feed has sent it to every stream open then: none of this hook's
    openStream();
    await waitFor(() =>
      expect(types()).toEqual(['approval_requested', 'approval_decided', 'approval_resolved']),
    );
    trace.unmount();
  });

  it('useTrace and useRun follow a thread live', { timeout: 120_000 }, async () => {
    inbox = await startTestInbox(context.db());
    const request = await inbox.manager.request(
      transferProposal('th-trace'),
      escalate('human_required'),
    );
    const wrapper = await wrapperFor('alice');
    const trace = renderHook(() => useTrace('th-trace'), { wrapper });
    const run = renderHook(() => useRun('th-trace'), { wrapper });
    await waitFor(() =>
      expect(trace.result.current.events.map((event) => event.type)).toEqual([
        'approval_requested',
      ]),
    );
    await waitFor(() => expect(run.result.current.pendingApprovals).toEqual([request.id]));
    await inbox.manager.decide(request.id, signAs(request, 'bob'));
    await waitFor(
      () =>
        expect(trace.result.current.events.map((event) => event.type)).toEqual([
          'approval_requested',
          'approval_decided',
          'approval_resolved',
        ]),
      { timeout: 20_000 },
    );
    await waitFor(() => expect(run.result.current.pendingApprovals).toEqual([]), {
      timeout: 20_000,
    });
    trace.unmount();
    run.unmount();
  });
});
