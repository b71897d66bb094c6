/**
 * When the guard core does the work it leaves for after an answer (judging a
 * request it let through on its bytes, reading a new session's first
 * request): one piece at a time, and while no request is on its way through
 * the guard, so that the requests in flight (their bodies, their streamed
 * answers) never wait for it. A piece waits at most `maxWaitMs` for such a
 * quiet moment (under constant traffic it then goes on between the requests'
 * chunks), and none waits once a later request of its own session has come
 * (that request is judged after it).
 */
export class Background {
  private inFlight = 0;
  private busy = false;
  private readonly waiting: { key: string; since: number; go: () => void }[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly maxWaitMs: number) {}

  /** A request is on its way until `answered` settles (its answer sent, or the agent gone). */
  track(answered: Promise<unknown> | undefined): void {
    this.inFlight++;
    const end = () => {
      this.inFlight--;
      this.wake();
    };
    if (answered) answered.then(end, end);
    else setImmediate(end);
  }

  /** Resolves when it is the turn of a piece of `key`'s work; call the returned function when it is done. */
  turn(key: string): Promise<() => void> {
    return new Promise((resolve) => {
      this.waiting.push({
        key,
        since: performance.now(),
        go: () => {
          let released = false;
          resolve(() => {
            if (released) return;
            released = true;
            this.busy = false;
            // The next piece after the I/O that waited meanwhile.
            setImmediate(() => this.wake());
          });
        },
      });
      this.wake();
    });
  }

  /** A request of `key` came: its session's waiting work goes first, without waiting for a quiet moment. */
  hurry(key: string): void {
    const w = this.waiting.find((x) => x.key === key);
    if (w) w.since = -Infinity;
    this.wake();
  }

  private wake(): void {
    if (this.busy || this.waiting.length === 0) return;
    const now = performance.now();
    let i = this.waiting.findIndex((w) => now - w.since >= this.maxWaitMs);
    if (i < 0 && this.inFlight === 0) i = 0;
    if (i < 0) {
      // Not quiet: look again when the oldest piece has waited its longest.
      if (this.timer === undefined) {
        const wait = Math.max(1, this.maxWaitMs - (now - this.waiting[0]!.since));
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.wake();
        }, wait);
      }
      return;
    }
    const [w] = this.waiting.splice(i, 1);
    this.busy = true;
    w!.go();
  }
}
