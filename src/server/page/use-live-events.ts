import { useEffect, useState } from 'react';

/** A number that goes up whenever the service publishes an event (SSE): views refetch on it. */
export function useLiveEvents(enabled: boolean): number {
  const [version, setVersion] = useState(0);
  useEffect(() => {
    if (!enabled) return undefined;
    const source = new EventSource('/api/events');
    const bump = () => setVersion((value) => value + 1);
    for (const type of ['approval_requested', 'approval_decided', 'approval_expired']) {
      source.addEventListener(type, bump);
    }
    return () => source.close();
  }, [enabled]);
  return version;
}
