/** The largest SHARED limit the wire can carry (uint32); the server's own maximum may be lower. */
export const MAX_WIRE_LIMIT = 4_294_967_295;
