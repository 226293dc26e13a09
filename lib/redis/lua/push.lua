-- lib/redis/lua/push.lua - a reader at snapshot ts8 makes transaction
-- start8, whose primary is cell P, commit above ts8 (store_ops.push):
-- the mark at the end of the primary's lock (a large transaction's)
-- is raised to ts8.
-- ARGV: P, start8, ts8; KEYS: the bucket's four (common.lua).  Returns
-- {0} (pushed), or {1} when the lock is gone or another's: the
-- transaction committed or rolled back.
local P, start8, ts8 = ARGV[1], ARGV[2], ARGV[3]

local lock = redis.call('HGET', KEYS[2], lock_key(P))
if not lock or lock_start(lock) ~= start8 then
	return {1}
end
local rec, mark = lock_mark(lock)
if not mark or not le8(ts8, mark) then
	redis.call('HSET', KEYS[2], lock_key(P), rec .. ts8)
end
return {0}
