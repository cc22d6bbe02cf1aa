/** A held lock of any implementation. */
export interface HeldLock {
  /** Lets the lock go; resolves once the implementation confirmed it. */
  release(): Promise<void>;
}

/** One contender's own client (connection, session or lease) of an implementation. */
export interface LockClient {
  /** Waits for the exclusive lock `name`, however the implementation waits (push or polling). */
  acquire(name: string): Promise<HeldLock>;
  /** Releases everything and closes the connection. */
  close(): Promise<void>;
}

/** A lock implementation under test, with what the report needs to know about it. */
export interface LockImpl {
  /** Short id used in file names and --only. */
  readonly id: string;
  /** Name shown in tables and plots. */
  readonly label: string;
  /** How it waits, shown in the report. */
  readonly waits: string;
  /** Library name and version, or the server version. */
  readonly version: string;
  /**
   * Redis commands this implementation sends over the wire (the rest of total_commands_processed
   * runs inside its Lua scripts); undefined when it does not use Redis.
   */
  readonly wireCommands?: readonly string[];
  /** Opens one contender's client. */
  connect(): Promise<LockClient>;
}
