// The EC2 test bed's address ranges: each bed (one a test file) holds one /20 of 198.18.0.0/15 (RFC 2544's
// benchmarking range, 32 of them) by a lock file that names its process, so that beds of parallel files,
// and of other vitest processes on the machine, never share one. A lock whose process is gone is taken over.
import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processAlive } from "@ottava/amphora";
import { run } from "../agent/agent";

/** The test range every bed's /20 is taken from. */
export const BED_SUPERNET = "198.18.0.0/15";
/** How many /20s it holds. */
export const BED_RANGES = 32;
const LOCKS = join(tmpdir(), "ottava-bed-ranges");

export interface BedRange {
  /** 0 … 31: which /20. */
  index: number;
  /** "198.18.16.0/20" */
  cidr: string;
  /** The /20's nth address ("198.18.16.0" + n), n < 4096. */
  address(n: number): string;
  /** Gives the range back (removes its lock). */
  release(): void;
}

/** The /20 number `index` of BED_SUPERNET. */
export function bedRange(index: number): Omit<BedRange, "release"> {
  const base = (198 << 24) + (18 << 16) + index * 4096;
  const address = (n: number) => {
    const v = base + n;
    return [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join(".");
  };
  return { index, cidr: `${address(0)}/20`, address };
}

/** The /20s that have an address on one of the host's interfaces (a bed of a process that holds no lock, or something else). */
function usedOnHost(): Set<number> {
  const used = new Set<number>();
  for (const m of run("/usr/sbin/ip", ["-4", "-o", "addr", "show"]).matchAll(/inet (\d+)\.(\d+)\.(\d+)\.\d+\//g)) {
    const [a, b, c] = [Number(m[1]), Number(m[2]), Number(m[3])];
    if (a === 198 && (b === 18 || b === 19)) used.add((b - 18) * 16 + (c >> 4));
  }
  return used;
}

const readPid = (file: string) => {
  try {
    return Number(readFileSync(file, "utf8").trim());
  } catch {
    return undefined;
  }
};

/** Creates `lock` holding this process's id, atomically (a hard link fails if the lock exists): whether it did. */
function take(lock: string): boolean {
  const tmp = `${lock}.${process.pid}.tmp`;
  writeFileSync(tmp, String(process.pid));
  try {
    linkSync(tmp, lock);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    return false;
  } finally {
    unlinkSync(tmp);
  }
}

/**
 * Takes a free /20: the first whose lock file this process creates, starting from one picked by
 * the process id so that parallel files seldom race for the same one.
 */
export function allocateRange(): BedRange {
  mkdirSync(LOCKS, { recursive: true });
  const used = usedOnHost();
  for (let i = 0; i < BED_RANGES; i++) {
    const index = (process.pid + i) % BED_RANGES;
    if (used.has(index)) continue;
    const lock = join(LOCKS, `${index}.lock`);
    if (!take(lock)) {
      const holder = readPid(lock);
      if (holder === undefined || processAlive(holder)) continue;
      // Its process is gone: whoever renames it away first takes it over (and one that renamed a new
      // holder's lock instead puts it back).
      const stale = `${lock}.${process.pid}.stale`;
      try {
        renameSync(lock, stale);
      } catch {
        continue;
      }
      if (readPid(stale) !== holder) {
        linkSync(stale, lock);
        unlinkSync(stale);
        continue;
      }
      unlinkSync(stale);
      if (!take(lock)) continue;
    }
    let released = false;
    return {
      ...bedRange(index),
      release: () => {
        if (released) return;
        released = true;
        if (readPid(lock) === process.pid) unlinkSync(lock);
      },
    };
  }
  throw new Error(`no free /20 of ${BED_SUPERNET}: all ${BED_RANGES} are held (${LOCKS})`);
}
