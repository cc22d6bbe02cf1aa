// What every coordinator refuses in a name (server/edge/request-validator.ts). Its length is left to
// the coordinator: serve --max-name-bytes may raise it, and the refusal names the limit.
const CONTROL = /\p{Cc}/u;
const LONE_SURROGATE = /\p{Cs}/u;
const SHOWN_CHARS = 40;

/** A name as messages show it: quoted, and cut after 40 characters with its size, so it is never echoed at length. */
export function shownName(name: string): string {
  if (name.length <= SHOWN_CHARS) return JSON.stringify(name);
  return `${JSON.stringify(name.slice(0, SHOWN_CHARS))}… (${Buffer.byteLength(name, "utf8")} bytes)`;
}

/**
 * Why no coordinator would take `name` as a lock name (or, with `prefix`, as a List prefix, which
 * may be empty), in one line naming `what` (NAME, PREFIX); undefined if it is fine.
 */
export function nameProblem(what: string, name: string, { prefix = false } = {}): string | undefined {
  if (!prefix && name.length === 0) return `${what} must not be empty`;
  if (CONTROL.test(name)) return `${what} ${shownName(name)} must not contain control characters`;
  if (LONE_SURROGATE.test(name)) return `${what} ${shownName(name)} is not valid UTF-8 (a lone surrogate)`;
  return undefined;
}

/** `message` without a leading `"NAME": ` (the client and server name the lock too), so the CLI shows it once. */
export function withoutName(message: string, name: string): string {
  const prefix = `${JSON.stringify(name)}: `;
  return message.startsWith(prefix) ? message.slice(prefix.length) : message;
}
