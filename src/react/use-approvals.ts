import { useCallback, useEffect, useState } from 'react';
import type { SignedDecision } from '../audit/decision-statement.js';
import type { ApprovalView } from '../server/approval-view.js';
import { useApprovalsClient } from './approvals-provider.js';
import { useLiveRefresh } from './use-live-refresh.js';

/** What {@link useApprovals} returns. */
export interface UseApprovals {
  /** Pending requests, newest first. */
  pending: ApprovalView[];
  /** Posts a signed decision (Ed25519 `signDecision`, or a passkey assertion) and refreshes. */
  decide(id: string, decision: SignedDecision): Promise<ApprovalView>;
  loading: boolean;
  error: Error | undefined;
  refresh(): void;
}

/**
 * Pending approval requests, kept live over SSE. `scope: 'mine'` (default) lists only what the
 * signed-in approver may decide now; `'all'` every pending request (optionally of one thread).
 *
 * @example const { pending, decide } = useApprovals({ scope: 'mine' });
 */
export function useApprovals(
  options: { scope?: 'mine' | 'all'; thread?: string } = {},
): UseApprovals {
  const client = useApprovalsClient();
  const scope = options.scope ?? 'mine';
  const [pending, setPending] = useState<ApprovalView[]>([]);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<Error | undefined>();
  const [manual, setManual] = useState(0);
  const live = useLiveRefresh(
    client,
    (event) => !options.thread || event.threadId === options.thread,
  );
  useEffect(() => {
    void live;
    void manual;
    let current = true;
    client
      .list({
        status: 'pending',
        scope,
        ...(options.thread ? { thread: options.thread } : {}),
        limit: 100,
      })
      .then(
        (page) => {
          if (!current) return;
          setPending(page.items);
          setError(undefined);
          setLoading(false);
        },
        (caught: Error) => {
          if (!current) return;
          setError(caught);
          setLoading(false);
        },
      );
    return () => {
      current = false;
    };
  }, [client, scope, options.thread, live, manual]);
  const decide = useCallback(
    async (id: string, decision: SignedDecision) => {
      const result = await client.decide(id, decision);
      setManual((value) => value + 1);
      return result;
    },
    [client],
  );
  const refresh = useCallback(() => setManual((value) => value + 1), []);
  return { pending, decide, loading, error, refresh };
}
