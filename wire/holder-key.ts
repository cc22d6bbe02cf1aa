/**
 * A map key for a holder made of wire fields, (name, owner) or (sessionId, owner): the parts joined
 * by NUL. Only the last part may contain NUL (the server rejects control characters in lock names,
 * and session ids are its own), so the key is unambiguous.
 */
export function holderKey(...parts: string[]): string {
  // (name, owner) on every grant and release: a plain concatenation beats join.
  return parts.length === 2 ? `${parts[0]}\u0000${parts[1]}` : parts.join("\u0000");
}
