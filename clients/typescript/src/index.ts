import { ApiError, ConnectionFailed, errorFor } from "./errors.js";
import { CallOptions, Operations } from "./operations.js";
import type { ErrorBody, ImportAnswer, ImportJob } from "./types.js";

export * from "./errors.js";
export type * from "./types.js";
export type { CallOptions } from "./operations.js";

export const VERSION = "0.1.0";
const KEY_PREFIX = "tm_"; // an API key; any other bearer is an OAuth access token, which names its end user
const RETRIED = new Set([429, 503]);
const FINISHED = new Set(["done", "refused", "failed"]);

export interface TwinMemoryOptions {
  /** A key (tm_…) or an OAuth access token; default the environment's TWIN_MEMORY_API_KEY. */
  apiKey?: string;
  /** The end user (X-Twin-Account); not with an OAuth token, which names its own. */
  account?: string;
  /** Default the environment's TWIN_MEMORY_URL, else http://127.0.0.1:8000. */
  baseUrl?: string;
  timeoutMs?: number;
  maxRetries?: number;
  /** Retries stop when their wait would pass this many ms after the first try. */
  deadlineMs?: number;
  fetch?: typeof fetch;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

function env(name: string): string | undefined {
  const process = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return process?.env?.[name];
}

/** The client: one method per route of /v1/memory/, on fetch. */
export class TwinMemory extends Operations {
  readonly account?: string;
  readonly baseUrl: string;
  #key: string;
  #options: Required<Pick<TwinMemoryOptions, "timeoutMs" | "maxRetries" | "deadlineMs" | "now" | "sleep">> & {
    fetch: typeof fetch;
  };

  constructor(options: TwinMemoryOptions = {}) {
    super();
    const key = options.apiKey ?? env("TWIN_MEMORY_API_KEY");
    if (!key) throw new TypeError("No API key: pass apiKey or set TWIN_MEMORY_API_KEY.");
    if (!key.startsWith(KEY_PREFIX) && options.account !== undefined)
      throw new TypeError("An OAuth access token names its end user itself: leave account unset.");
    this.#key = key;
    this.account = options.account;
    this.baseUrl = (options.baseUrl ?? env("TWIN_MEMORY_URL") ?? "http://127.0.0.1:8000").replace(/\/+$/, "");
    this.#options = {
      timeoutMs: options.timeoutMs ?? 30_000,
      maxRetries: options.maxRetries ?? 2,
      deadlineMs: options.deadlineMs ?? 120_000,
      now: options.now ?? (() => Date.now()),
      sleep: options.sleep ?? ((ms) => new Promise((done) => setTimeout(done, ms))),
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    };
  }

  /** The same client for another end user; refused for an OAuth token. */
  forAccount(account: string): TwinMemory {
    if (!this.#key.startsWith(KEY_PREFIX))
      throw new TypeError("forAccount needs an API key: an OAuth access token names its end user itself.");
    return new TwinMemory({ ...this.#options, apiKey: this.#key, account, baseUrl: this.baseUrl });
  }

  toJSON(): object {
    return { account: this.account, baseUrl: this.baseUrl };
  }

  #headers(extra: Record<string, string> = {}): Record<string, string> {
    const headers: Record<string, string> = { Authorization: `Bearer ${this.#key}`, ...extra };
    if (this.account !== undefined && this.#key.startsWith(KEY_PREFIX)) headers["X-Twin-Account"] = this.account;
    if (typeof window === "undefined") headers["User-Agent"] = `twin-memory-typescript/${VERSION}`;
    return headers;
  }

  /** The response to a request; an error answer thrown, 429 and 503 sent again as the rules allow. */
  async #send(method: string, path: string, init: RequestInit, options: CallOptions = {}, again = true) {
    const url = this.baseUrl + path;
    const started = this.#options.now();
    for (let attempt = 0; ; attempt++) {
      const timeout = AbortSignal.timeout(options.timeoutMs ?? this.#options.timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
      let response: Response;
      try {
        response = await this.#options.fetch(url, { ...init, method, signal, headers: this.#headers(init.headers as Record<string, string>) });
      } catch (error) {
        if (options.signal?.aborted) throw error;
        const reason = timeout.aborted ? "no answer in time" : String((error as Error)?.cause ?? (error as Error)?.message ?? error);
        throw new ConnectionFailed(url, reason);
      }
      if (response.status < 400) return response;
      const error = await errorOf(response);
      const wait = (error.retryAfter ?? 1) * 1000;
      const final = !again || !RETRIED.has(error.status) || attempt >= this.#options.maxRetries;
      if (final || this.#options.now() + wait - started > this.#options.deadlineMs) throw error;
      await this.#options.sleep(wait);
    }
  }

  protected async tool(name: string, args: object, options?: CallOptions): Promise<unknown> {
    const body = JSON.stringify(args);
    const init = { body, headers: { "Content-Type": "application/json" } };
    return (await this.#send("POST", `/v1/memory/${name}`, init, options)).json();
  }

  /** The export's JSON Lines, parsed, one at a time (the header line first). */
  async *export(options?: CallOptions): AsyncGenerator<Record<string, unknown>> {
    const response = await this.#send("POST", "/v1/memory/export", {}, options);
    const decoder = new TextDecoder();
    let rest = "";
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      rest += decoder.decode(chunk, { stream: true });
      const lines = rest.split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) if (line.trim()) yield JSON.parse(line);
    }
    if (rest.trim()) yield JSON.parse(rest);
  }

  /** Node: the export streamed into a file, written whole or not at all; answers the bytes written. */
  async exportToFile(path: string, options?: CallOptions): Promise<number> {
    const fs = await import("node:fs");
    const { Readable } = await import("node:stream");
    const { pipeline } = await import("node:stream/promises");
    const response = await this.#send("POST", "/v1/memory/export", {}, options);
    const partial = `${path}.part`;
    try {
      await pipeline(Readable.fromWeb(response.body as never), fs.createWriteStream(partial));
      await fs.promises.rename(partial, path);
    } catch (error) {
      await fs.promises.rm(partial, { force: true });
      throw error;
    }
    return (await fs.promises.stat(path)).size;
  }

  /** An export into this end user's memory, from a Blob, a ReadableStream or (on Node) a file path. A job
   * still importing is asked after until it ends: its answer returned, or its refusal thrown. */
  async import(from: Blob | ReadableStream<Uint8Array> | string, options?: CallOptions): Promise<ImportAnswer> {
    let body: BodyInit = from as BodyInit;
    const init: RequestInit & { duplex?: string } = { headers: { "Content-Type": "application/x-ndjson" } };
    if (typeof from === "string") {
      const fs = await import("node:fs");
      body = (await fs.openAsBlob(from)) as Blob;
    }
    if (body instanceof Blob) {
      const first = new Uint8Array(await body.slice(0, 2).arrayBuffer());
      if (first[0] === 0x1f && first[1] === 0x8b) init.headers = { "Content-Type": "application/gzip" };
    } else init.duplex = "half";
    const response = await this.#send("POST", "/v1/memory/import", { ...init, body }, options, body instanceof Blob);
    let answer = (await response.json()) as ImportAnswer | ImportJob;
    if (response.status !== 202) return answer as ImportAnswer;
    while (!FINISHED.has((answer as ImportJob).state)) {
      await this.#options.sleep(1000);
      answer = await this.importJob((answer as ImportJob).job, options);
    }
    const job = answer as ImportJob;
    if (job.state === "done" && job.answer) return job.answer;
    const error = (job.error ?? { error: "import_failed", message: "The import failed." }) as unknown as ErrorBody;
    throw errorFor(job.state === "failed" ? 503 : error.error === "too_large" ? 413 : 400, error);
  }

  /** An import job's state, by its id. */
  async importJob(job: string, options?: CallOptions): Promise<ImportJob> {
    const path = `/v1/memory/import/${encodeURIComponent(job)}`;
    return (await this.#send("GET", path, {}, options)).json() as Promise<ImportJob>;
  }
}

async function errorOf(response: Response): Promise<ApiError> {
  let body: ErrorBody;
  try {
    body = (await response.json()) as ErrorBody;
  } catch {
    body = { error: "error", message: response.statusText };
  }
  const header = response.headers.get("Retry-After");
  const retryAfter = header !== null && !Number.isNaN(Number(header)) ? Number(header) : body.retry_after;
  return errorFor(response.status, body, response.headers.get("X-Request-Id") ?? undefined, retryAfter);
}
