-- lib/redis/lua/rollback.lua - roll transaction start8 back on cell P
-- (store.h's rollback): drop its lock and data and leave a rollback
-- record at start8, so that a delayed or retried prewrite of it can
-- never succeed here.  Another transaction's lock is left alone.
-- ARGV: P, start8.  KEYS: the bucket's four (common.lua), and KEYS[5],
-- on the primary, the lease, dropped too.
-- Returns {0}, or {1, key} when it committed at key.
local P, start8 = ARGV[1], ARGV[2]

local f = find_commit(P, start8)
if f and f[2] ~= 'R' then
	return {1, f[1]}
end
local lock = redis.call('HGET', KEYS[2], lock_key(P))
if lock and lock_start(lock) == start8 then
	del(lock_key(P))
	redis.call('ZREM', KEYS[3], lock_key(P))
end
if KEYS[5] then
	redis.call('DEL', KEYS[5])
end
del(data_key(P, start8))
put(P .. '\2' .. inv8(start8), 'R' .. start8)
return {0}
