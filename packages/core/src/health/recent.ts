// The heartbeat receiver's duplicate filter (pure: the caller gives the time).

/**
 * The (amphora id, seq) pairs seen recently: at most `max`, each for `windowMs`. A restarted agent
 * counts from 0 again, so a pair is only a duplicate while it is recent, and seq need not grow.
 */
export class RecentPairs {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly windowMs: number,
    private readonly max: number,
  ) {}

  /** True if the pair was seen within the window; otherwise records it. */
  check(amphoraId: string, seq: number, now: number): boolean {
    for (const [k, at] of this.seen) {
      if (at > now - this.windowMs && this.seen.size < this.max) break;
      this.seen.delete(k); // oldest first: Map keeps insertion order
    }
    const key = `${amphoraId}\u0000${seq}`;
    const at = this.seen.get(key);
    if (at !== undefined && at > now - this.windowMs) return true;
    this.seen.set(key, now);
    return false;
  }

  get size(): number {
    return this.seen.size;
  }
}
