/** One block of an SSE stream (lines up to a blank line), parsed. */
export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comments: string[];
}

function parseFrame(block: string): SseFrame {
  const frame: SseFrame = { comments: [] };
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) frame.comments.push(line.slice(1).trim());
    const match = line.match(/^(id|event|data|retry): (.*)$/);
    if (match) frame[match[1] as "id" | "event" | "data" | "retry"] = match[2];
  }
  return frame;
}

/** A minimal SSE client over a Response body, for tests. */
export class SseReader {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private buffer = "";

  constructor(body: ReadableStream<Uint8Array>) {
    this.reader = body.getReader();
  }

  /** The next frame, or null when the stream has ended. */
  async next(): Promise<SseFrame | null> {
    for (;;) {
      const end = this.buffer.indexOf("\n\n");
      if (end !== -1) {
        const block = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        return parseFrame(block);
      }
      const { done, value } = await this.reader.read();
      if (done) return null;
      this.buffer += this.decoder.decode(value, { stream: true });
    }
  }

  /** Every remaining frame until the stream ends. */
  async rest(): Promise<SseFrame[]> {
    const frames: SseFrame[] = [];
    for (let frame = await this.next(); frame !== null; frame = await this.next()) frames.push(frame);
    return frames;
  }

  /** Frames up to and including the first that `isLast` accepts; throws when the stream ends first. */
  async until(isLast: (frame: SseFrame) => boolean): Promise<SseFrame[]> {
    const frames: SseFrame[] = [];
    for (let frame = await this.next(); frame !== null; frame = await this.next()) {
      frames.push(frame);
      if (isLast(frame)) return frames;
    }
    throw new Error(`The stream ended after ${frames.length} frames without the expected one.`);
  }

  cancel(): Promise<void> {
    return this.reader.cancel();
  }
}

/** Only the events (frames with an `event:` line), as `{event, payload}`. */
export function eventsOf(frames: SseFrame[]): { event: string; payload: unknown }[] {
  return frames.filter((frame) => frame.event).map((frame) => ({ event: frame.event as string, payload: JSON.parse(frame.data ?? "null") }));
}
