-- lib/redis/lua/find_commit.lua - the write record of transaction start8
-- in cell P (store.h's find_commit).  ARGV: P, start8.  KEYS: the
-- bucket's four (common.lua) and its fence (RS_FENCE, redis.h), written
-- so that the WAIT after this covers what it read: a decision stands on
-- what it finds, and a record on the master alone would be lost to a
-- failover after others acted on it.
-- Returns {0, key, op} or {1} when there is none.
fence(function() redis.pcall('SET', KEYS[5], '1') end)
local f = find_commit(ARGV[1], ARGV[2])
if f then
	return {0, f[1], f[2]}
end
return {1}
