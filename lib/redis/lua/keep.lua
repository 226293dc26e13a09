-- lib/redis/lua/keep.lua - the heartbeat of a long commit (lease_keep): the
-- wall time in the lock of cell P, when it is still transaction
-- start8's, becomes wall8, and its lease, KEYS[5], lives ttl ms more.
-- ARGV: P, start8, wall8, ttl; KEYS: the bucket's four (common.lua)
-- and the lease.  Returns {0}, or {1} when the lock is
-- gone or another's (nothing changed).
local P, start8, wall8, ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local lock = redis.call('HGET', KEYS[2], lock_key(P))
if not lock or lock_start(lock) ~= start8 then
	return {1}
end
-- codec_lock_encode: version, op, start_ts, then wall_ms, 8 bytes.
redis.call('HSET', KEYS[2], lock_key(P),
    string.sub(lock, 1, 10) .. wall8 .. string.sub(lock, 19))
redis.call('PEXPIRE', KEYS[5], ttl)
return {0}
