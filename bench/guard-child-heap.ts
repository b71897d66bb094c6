/**
 * Loaded first (`--import`) in the guard's child process of `bench:guard`'s concurrency row
 * (guard-concurrency.ts): V8's young generation kept small from the process's start, as
 * `compact-safe guard` keeps it (src/cli/main.ts sets it before the guard's modules load). The bench's
 * `--default-heap` leaves it out: V8's own sizing, for comparison.
 */
import { keepYoungGenerationSmall } from "../src/guard/server/process-heap.js";

keepYoungGenerationSmall();
