/**
 * Tells every node that a tenant's configuration changed, so that each drops its cached copies (clients,
 * APIs, grants, CORS origins, tenant settings and rate limits, attack protection, event streams) as soon as
 * the write commits rather than when a cache entry times out.
 *
 * A Management API write publishes after it commits and before its response is sent (management/index.ts),
 * and waits until every other live node has acknowledged that it dropped its copies (at most ACK_WAIT_MS): so
 * no request the caller sends after hearing of its change, to any node, is served from an older copy. Nodes
 * know each other from a heartbeat on the same carrier; a node that stops beating is no longer waited for.
 * The carrier:
 *  - Redis pub/sub when REDIS_URL is set (the nodes already share Redis for counters);
 *  - otherwise PostgreSQL LISTEN/NOTIFY on the database they share;
 *  - SQLite: the processes of one GATEHOUSE_WORKERS cluster relay through the primary (cluster IPC); a single
 *    process needs nothing more than its own listeners.
 * A carrier that loses its connection may have missed messages: on reconnecting, the node drops everything it
 * cached (listeners get `undefined`). The caches keep their short lifetimes as the last line of defence.
 *
 * Messages: `c <node>:<seq> <tenant>` a change, `a <node>:<seq> <acker>` its acknowledgement, `h <node>` a
 * heartbeat, `b <node>` a node leaving.
 */
import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { Database } from '../store/schema.js';

/** A tenant's id, or undefined for "every tenant" (after a carrier reconnected). */
export type ChangeListener = (tenantId: string | undefined) => void;

export interface ChangeBus {
  readonly kind: 'local' | 'cluster' | 'redis' | 'postgres';
  /** Runs this process's listeners, tells the other nodes, and resolves once they have acknowledged (or ACK_WAIT_MS). */
  publish(tenantId: string): Promise<void>;
  subscribe(listener: ChangeListener): () => void;
  /** The other nodes this one knows to be alive. */
  peers(): number;
  /** Resolves once this process hears other nodes (or gave up for now and keeps retrying). */
  ready: Promise<void>;
  close(): Promise<void>;
}

/** The channel name; a schema (tests, shared databases) gets its own so that deployments do not hear each other. */
export function channelName(scope: string | undefined): string {
  return `gatehouse_tenant_changed${scope ? `_${scope.replace(/[^A-Za-z0-9_]/g, '_')}` : ''}`.slice(0, 63);
}

/** How long a publisher waits for the other nodes' acknowledgements before it goes on without them. */
const ACK_WAIT_MS = 1000;
const HEARTBEAT_MS = 2000;
/** A node not heard for this long is taken to be gone. */
const PEER_EXPIRY_MS = 3 * HEARTBEAT_MS + 1000;

interface Carrier {
  /** Sends one message to every node (this one included, or not: own messages are ignored). */
  send(message: string): Promise<void>;
  close(): Promise<void>;
}

/** The protocol over any carrier: listeners, peers, acknowledgements, heartbeats. */
class Bus implements ChangeBus {
  readonly node = randomUUID();
  readonly #listeners = new Set<ChangeListener>();
  readonly #peers = new Map<string, number>();
  readonly #waiting = new Map<number, { missing: Set<string>; done: () => void }>();
  #sequence = 0;
  #carrier: Carrier | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  ready: Promise<void> = Promise.resolve();

  constructor(readonly kind: ChangeBus['kind']) {}

  /** Starts beating on the carrier. */
  attach(carrier: Carrier): void {
    this.#carrier = carrier;
    const beat = () => void carrier.send(`h ${this.node}`).catch(() => undefined);
    // Heard once listening, so that the answers of the nodes that hear it come back to this one.
    void this.ready.then(beat);
    this.#heartbeat = setInterval(beat, HEARTBEAT_MS).unref();
  }

  subscribe(listener: ChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  peers(): number {
    const now = Date.now();
    for (const [node, seen] of this.#peers) if (now - seen > PEER_EXPIRY_MS) this.#peers.delete(node);
    return this.#peers.size;
  }

  run(tenantId: string | undefined): void {
    for (const listener of this.#listeners) {
      try {
        listener(tenantId);
      } catch {
        // A listener only drops cached copies; one failing must not keep the others from theirs.
      }
    }
  }

  async publish(tenantId: string): Promise<void> {
    this.run(tenantId);
    const carrier = this.#carrier;
    if (!carrier) return;
    const sequence = ++this.#sequence;
    this.peers();
    const missing = new Set(this.#peers.keys());
    let done = () => undefined as void;
    const acknowledged = new Promise<void>((resolve) => {
      const timer = setTimeout(() => done(), ACK_WAIT_MS).unref();
      done = () => {
        clearTimeout(timer);
        this.#waiting.delete(sequence);
        resolve();
      };
    });
    if (missing.size === 0) done();
    else this.#waiting.set(sequence, { missing, done });
    try {
      await carrier.send(`c ${this.node}:${sequence} ${tenantId}`);
    } catch (err) {
      done();
      throw err;
    }
    await acknowledged;
  }

  /** A message from the carrier. */
  receive(message: string): void {
    const [kind, from, rest] = message.split(' ', 3) as [string, string | undefined, string | undefined];
    if (!from) return;
    const sender = from.split(':')[0]!;
    if (sender === this.node) return;
    if (kind === 'b') {
      this.#peers.delete(sender);
      for (const wait of this.#waiting.values()) if (wait.missing.delete(sender) && wait.missing.size === 0) wait.done();
      return;
    }
    const known = this.#peers.has(sender);
    this.#peers.set(sender, Date.now());
    // A node just heard of hears of this one at once, so that its first publish waits for it.
    if (kind === 'h' && !known) void this.#carrier?.send(`h ${this.node}`).catch(() => undefined);
    if (kind === 'c' && rest) {
      this.run(rest);
      void this.#carrier?.send(`a ${from} ${this.node}`).catch(() => undefined);
    }
  }

  /** An acknowledgement names the publisher first: `a <publisher>:<seq> <acker>`. */
  receiveAck(message: string): boolean {
    if (!message.startsWith('a ')) return false;
    const [, from, acker] = message.split(' ', 3) as [string, string | undefined, string | undefined];
    if (!from || !acker) return true;
    const [publisher, sequence] = from.split(':') as [string, string | undefined];
    if (publisher !== this.node) return true;
    this.#peers.set(acker, Date.now());
    const wait = this.#waiting.get(Number(sequence));
    if (wait && wait.missing.delete(acker) && wait.missing.size === 0) wait.done();
    return true;
  }

  deliver(message: string): void {
    if (!this.receiveAck(message)) this.receive(message);
  }

  async close(): Promise<void> {
    clearInterval(this.#heartbeat);
    const carrier = this.#carrier;
    this.#carrier = undefined;
    for (const wait of [...this.#waiting.values()]) wait.done();
    if (!carrier) return;
    await carrier.send(`b ${this.node}`).catch(() => undefined);
    await carrier.close();
  }
}

export function createLocalBus(): ChangeBus {
  return new Bus('local');
}

const CLUSTER_MESSAGE = 'gatehouse:tenant-changed';

/** The primary of a GATEHOUSE_WORKERS cluster on SQLite passes each worker's message on to the others. */
export function relayClusterChanges(): void {
  cluster.on('message', (from, message: unknown) => {
    if (!message || (message as { type?: unknown }).type !== CLUSTER_MESSAGE) return;
    for (const worker of Object.values(cluster.workers ?? {})) {
      if (worker && worker !== from && worker.isConnected()) worker.send(message);
    }
  });
}

export function createClusterBus(): ChangeBus {
  const bus = new Bus('cluster');
  const onMessage = (message: unknown) => {
    const m = message as { type?: unknown; body?: unknown };
    if (m && m.type === CLUSTER_MESSAGE && typeof m.body === 'string') bus.deliver(m.body);
  };
  process.on('message', onMessage);
  bus.attach({
    send: async (body) => void process.send?.({ type: CLUSTER_MESSAGE, body }),
    close: async () => void process.off('message', onMessage),
  });
  return bus;
}

export function createRedisBus(url: string, scope: string | undefined): ChangeBus {
  const bus = new Bus('redis');
  const channel = channelName(scope);
  // Publishing waits through one reconnect at most; a Redis that is down must not hold up Management writes.
  const publisher = new Redis(url, { maxRetriesPerRequest: 1, commandTimeout: 1000, connectTimeout: 2000 });
  // Not ioredis's own resubscribe after a reconnect: it leaves the command's promise unhandled, so a Redis that
  // drops again at once would end the process with an unhandled rejection. Subscribed again below, handled.
  const subscriber = new Redis(url, { connectTimeout: 2000, autoResubscribe: false });
  publisher.on('error', () => undefined);
  subscriber.on('error', () => undefined);
  let connectedBefore = false;
  // After a reconnect: subscribe again; what was published meanwhile is lost, so drop all.
  subscriber.on('ready', () => {
    if (connectedBefore) {
      subscriber.subscribe(channel).catch(() => undefined);
      bus.run(undefined);
    }
    connectedBefore = true;
  });
  subscriber.on('message', (_channel: string, message: string) => bus.deliver(message));
  bus.ready = subscriber.subscribe(channel).then(
    () => undefined,
    () => undefined,
  );
  bus.attach({
    send: async (message) => void (await publisher.publish(channel, message)),
    close: async () => {
      await Promise.all([publisher.quit().catch(() => publisher.disconnect()), subscriber.quit().catch(() => subscriber.disconnect())]);
    },
  });
  return bus;
}

const RECONNECT_MS = 1000;

export function createPostgresBus(connectionString: string, db: Kysely<Database>, scope: string | undefined): ChangeBus {
  const bus = new Bus('postgres');
  const channel = channelName(scope);
  let client: pg.Client | undefined;
  let closed = false;
  let connectedBefore = false;
  let timer: NodeJS.Timeout | undefined;
  // One connection of its own holds the LISTEN; the pool's connections come and go.
  const connect = async (): Promise<void> => {
    if (closed) return;
    const next = new pg.Client({ connectionString });
    const retry = () => {
      if (client === next) client = undefined;
      next.removeAllListeners();
      next.on('error', () => undefined);
      void next.end().catch(() => undefined);
      if (!closed && !timer) timer = setTimeout(() => ((timer = undefined), void connect()), RECONNECT_MS).unref();
    };
    next.on('error', retry);
    next.on('end', retry);
    next.on('notification', (n) => {
      if (n.channel === channel && n.payload) bus.deliver(n.payload);
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${channel}`);
      client = next;
      if (connectedBefore) bus.run(undefined);
      connectedBefore = true;
    } catch {
      retry();
    }
  };
  bus.ready = connect();
  bus.attach({
    send: async (message) => void (await sql`select pg_notify(${channel}, ${message})`.execute(db)),
    close: async () => {
      closed = true;
      clearTimeout(timer);
      const c = client;
      client = undefined;
      c?.removeAllListeners();
      c?.on('error', () => undefined);
      await c?.end().catch(() => undefined);
    },
  });
  return bus;
}
