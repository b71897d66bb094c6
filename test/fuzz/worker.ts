/** Worker thread of the fuzz harness: runs in-process cases and reports each start and outcome. */
import { parentPort, workerData } from "node:worker_threads";
import { makeCase, type Profile } from "./generate.js";
import { runInProcess } from "./pipeline.js";

interface Job {
  seed: number;
  profile: Profile;
  indices: number[];
}

const job = workerData as Job;
for (const index of job.indices) {
  parentPort!.postMessage({ type: "start", index });
  const c = makeCase(job.seed, index, job.profile);
  const outcome = await runInProcess(c);
  parentPort!.postMessage({ type: "done", outcome });
}
parentPort!.postMessage({ type: "end" });
