/** Tasks the synthesis pool's tests run in its worker threads. No tests here. */

/** Sleeps `ms`, then says which task it was and when it ran (wall-clock ms, comparable across threads). */
export async function sleepTask(arg: { tag: string; ms: number }): Promise<{ tag: string; startMs: number; endMs: number }> {
  const startMs = Date.now();
  await new Promise((r) => setTimeout(r, arg.ms));
  return { tag: arg.tag, startMs, endMs: Date.now() };
}
