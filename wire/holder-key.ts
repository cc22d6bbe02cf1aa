/**
 * A map key for a holder made of wire fields, (name, owner) or (sessionId, owner): the parts joined
 * by NUL. Only the last part may contain NUL (the server rejects control characters in lock names,
 * and session ids are its own), so the key is unambiguous.
 */
export function holderKey(...parts: string[]): string {
  return parts.join("\u0000");
}
