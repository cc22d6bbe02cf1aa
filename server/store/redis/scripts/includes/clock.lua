-- clock: the Redis clock, read once per script run (never a coordinator's clock).
-- Expects in scope: rcall (redis.call)
-- Defines: t, the TIME reply {seconds, microseconds}; now, the time in whole ms
local t = rcall('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
