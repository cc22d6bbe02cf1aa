-- clock: the Redis clock, read once per script run (never a coordinator's clock).
-- Expects in scope: rcall (redis.call)
-- Defines: redisTime, the TIME reply {seconds, microseconds}; now, the time in whole ms
local redisTime = rcall('TIME')
local now = tonumber(redisTime[1]) * 1000 + math.floor(tonumber(redisTime[2]) / 1000)
