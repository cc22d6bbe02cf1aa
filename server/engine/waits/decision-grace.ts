/**
 * How long past its wait an acquire (or set) still waits for the store call that decides whether it
 * queues at all. A wait bounds time in the queue: a free lock whose store call answers late (a slow
 * link, a busy Redis) is granted, not given up with its fencing token burnt by the withdrawal. A
 * store that does not answer within this grace either gets the TIMEOUT as before, well inside the
 * client's own deadline (wait + 1 s).
 */
export const DECISION_GRACE_MS = 250;
