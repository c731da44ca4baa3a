// What the benchmark reads of a live process from /proc (Linux): its CPU time and its memory.
import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU time of a live process in ms at nanosecond resolution: the sum of /proc/<pid>/task/<tid>/schedstat (time on
 * the CPU) over its threads. The tick counters of /proc/<pid>/stat move in 10 ms steps: too coarse for an idle
 * daemon over one minute. (Threads that already exited are not counted; node's worker threads live as long as it.)
 */
export function cpuNsMsOf(pid) {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {}
  }
  return ns / 1e6;
}

/** A /proc/<pid>/status field in kB (VmRSS, VmHWM). */
export function statusKb(pid, field) {
  const m = readFileSync(`/proc/${pid}/status`, "utf8").match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"));
  return m ? Number(m[1]) : Number.NaN;
}
