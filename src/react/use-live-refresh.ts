import { useEffect, useRef, useState } from 'react';
import type { InboxEvent } from '../server/approval-feed.js';
import type { ApprovalsClient } from './approvals-client.js';

/**
 * A counter that moves whenever a live event matching `filter` arrives, and once when the
 * stream opens (hooks refetch on it): what changed between a hook's first read and the moment
 * the server started streaming to it reaches the hook through that second read.
 */
export function useLiveRefresh(
  client: ApprovalsClient,
  filter: (event: InboxEvent) => boolean = () => true,
  enabled = true,
): number {
  const [version, setVersion] = useState(0);
  // The latest filter, read on each event: a new filter function per render must not reconnect.
  const current = useRef(filter);
  current.current = filter;
  useEffect(() => {
    if (!enabled) return undefined;
    const bump = () => setVersion((value) => value + 1);
    return client.subscribe(
      (event) => {
        if (current.current(event)) bump();
      },
      undefined,
      bump,
    );
  }, [client, enabled]);
  return version;
}
