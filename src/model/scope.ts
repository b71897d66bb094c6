/**
 * A counted scope for state that lives while some caller holds it open (a memo for one compaction, shared
 * by compactions that overlap): `onFirst` runs when the first scope opens, `onLast` when the last one
 * closes. Each `open()` returns the function that closes it; closing twice closes once.
 */
export function countedScope(onFirst: () => void, onLast: () => void): () => () => void {
  let open = 0;
  return () => {
    if (open++ === 0) onFirst();
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      if (--open === 0) onLast();
    };
  };
}
