-- queue-rank: the queue's order with priorities (docs/elections.md). A waiter's queue score is its arrival
-- number `seq` (the data hash's counter) less priority × 2^44, so every higher priority sorts first and
-- arrival order holds within one priority; priority 0 scores `seq` as ever. Twin: memory-entries.ts enqueue.
-- Bounds: seq < 2^44 and priority ≤ 100 keep every score exact in a double.
-- Expects in scope: rcall
-- Defines: enqueue(lock, waiter, priority, last, fields): queues waiter (priority: decimal text or nil, 0) as
--   arrival last + 1 (last: the hash's `seq` as the caller read it, nil: 0) and adds 'seq' and that number to
--   the list fields, for the caller's HSET; returns its position (1: the head) when its priority is above 0,
--   else nil (it is last: the caller knows where)
local RANK = 17592186044416
local function enqueue(lock, waiter, priority, last, fields)
  local rank, seq = tonumber(priority) or 0, (tonumber(last) or 0) + 1
  rcall('ZADD', lock.queue, seq - rank * RANK, waiter)
  fields[#fields + 1], fields[#fields + 2] = 'seq', seq
  return rank > 0 and rcall('ZRANK', lock.queue, waiter) + 1 or nil
end
