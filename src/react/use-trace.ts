import { useEffect, useState } from 'react';
import type { TraceEvent } from '../audit/trace-event.js';
import { useApprovalsClient } from './approvals-provider.js';
import { useLiveRefresh } from './use-live-refresh.js';

/** A thread's audit trail, oldest first, refreshed when one of its approvals changes. */
export function useTrace(threadId: string): {
  events: TraceEvent[];
  loading: boolean;
  error: Error | undefined;
} {
  const client = useApprovalsClient();
  const [events, setEvents] = useState<TraceEvent[]>([]);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<Error | undefined>();
  const live = useLiveRefresh(client, (event) => event.threadId === threadId);
  useEffect(() => {
    void live;
    let current = true;
    client.threadEvents(threadId).then(
      (loaded) => {
        if (!current) return;
        setEvents(loaded);
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
  }, [client, threadId, live]);
  return { events, loading, error };
}
