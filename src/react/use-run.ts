import { useEffect, useState } from 'react';
import type { RunView } from '../server/run-view.js';
import { useApprovalsClient } from './approvals-provider.js';
import { useLiveRefresh } from './use-live-refresh.js';

/**
 * The run behind a thread: status (`running`, `suspended`, `completed`, `failed`), its pending
 * approvals and its last messages (sanitised by the service), refreshed live.
 */
export function useRun(threadId: string): {
  status: RunView['status'] | undefined;
  pendingApprovals: string[];
  lastMessages: RunView['lastMessages'];
  loading: boolean;
  error: Error | undefined;
} {
  const client = useApprovalsClient();
  const [run, setRun] = useState<RunView | undefined>();
  const [error, setError] = useState<Error | undefined>();
  const live = useLiveRefresh(client, (event) => event.threadId === threadId);
  useEffect(() => {
    void live;
    let current = true;
    client.run(threadId).then(
      (loaded) => {
        if (!current) return;
        setRun(loaded);
        setError(undefined);
      },
      (caught: Error) => {
        if (current) setError(caught);
      },
    );
    return () => {
      current = false;
    };
  }, [client, threadId, live]);
  return {
    status: run?.status,
    pendingApprovals: run?.pendingApprovals ?? [],
    lastMessages: run?.lastMessages ?? [],
    loading: run === undefined && error === undefined,
    error,
  };
}
