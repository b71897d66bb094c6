/**
 * The heap of a process that runs the guard and nothing else (the CLI's
 * `compact-safe guard`). V8 doubles its young generation, up to 16 MiB a
 * semi-space, each time many young objects survive a scavenge, and keeps it:
 * the guard's reading of a body (a few MiB of parsed JSON that live until
 * the body is judged) grows it to its largest, 32 MiB or more of committed
 * heap held for 12 to 25 MiB in use, and a large body's socket chunks wait
 * for the next scavenge to be let go of. Kept at its starting size (1 MiB a
 * semi-space), a guard holding 32 sessions of 1 MB peaks about 35 MiB lower
 * (`npm run bench:guard`), for a few more scavenges.
 *
 * It changes a flag of the whole process (`v8.setFlagsFromString`, read by
 * V8 each time it would grow the young generation), so the library never
 * calls it by itself: the CLI does, and a host running the guard in a
 * process of its own may.
 */
import { setFlagsFromString } from "node:v8";

/** Keeps V8's young generation at its starting size for the rest of this process (see the module comment). */
export function keepYoungGenerationSmall(): void {
  setFlagsFromString("--semi-space-growth-factor=1");
}
